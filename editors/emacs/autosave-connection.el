;;; autosave-connection.el --- The autosave agent's control socket -*- lexical-binding: t -*-

;; Copyright (C) the autosave authors
;; Package-Requires: ((emacs "27.1"))

;; This file is not part of GNU Emacs.

;;; Commentary:

;; One connection per agent to its control socket (a Unix socket, JSON-RPC
;; 2.0, one message per line; see docs/protocol.md): finding the socket as the
;; `autosave' command does, sending requests, and handing answers and event
;; notifications over, in order, to the callbacks and to
;; `autosave-connection-handlers'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(defvar autosave-connection-handlers nil
  "Functions the connection calls, a plist.
`:event' (AGENT PARAMS): an event notification.  `:ready' (AGENT):
connected and subscribed.  `:lost' (AGENT REASON): the connection ended.")

(cl-defstruct (autosave--agent (:constructor autosave--agent-create))
  "An agent: its socket, the one connection to it, the buffers following it."
  socket state root process (next-id 1) (callbacks (make-hash-table)) (partial "")
  ready buffers)

(defvar autosave--agents nil
  "The agents known, by socket path (an alist).")

(defun autosave--user (uid)
  "A name for the user with UID, for messages: \"user alice\", else \"uid 1234\"."
  (let ((name (and (fboundp 'user-login-name) (user-login-name uid))))
    (if name (format "user %s" name) (format "uid %d" uid))))

(defun autosave--trusted-p (uid)
  "Whether a socket or agent of UID may be talked to: ours, or root's."
  (or (= uid (user-uid)) (= uid 0)))

(defun autosave--checked (socket state named-by)
  "SOCKET (with its STATE folder) as a plist, or why it is refused.
NAMED-BY says where the path came from.  A socket path can come from
anywhere (a pointer file a cloned repository shipped): the socket file
must be ours or root's.  Emacs cannot ask who listens (SO_PEERCRED), so
the file's owner stands in for it."
  (let ((attributes (file-attributes socket 'integer)))
    (if (and attributes (not (autosave--trusted-p (file-attribute-user-id attributes))))
        (list :refused (format "refused the socket %s (named by %s): it belongs to %s, not to you (%s), so nothing was sent to it"
                               socket named-by (autosave--user (file-attribute-user-id attributes))
                               (autosave--user (user-uid))))
      (list :socket socket :state state))))

(defun autosave--find (directory)
  "Find the agent's socket for DIRECTORY as the `autosave' command does.
$AUTOSAVE_SOCKET, else walking up to a `.autosave' folder holding
`agent.sock' (or `agent.sock.path', naming a socket elsewhere).
Return (:socket S :state FOLDER), (:refused WHY), or nil when none."
  (let ((forced (getenv "AUTOSAVE_SOCKET")))
    (if (and forced (not (string-empty-p forced)))
        (autosave--checked forced nil "AUTOSAVE_SOCKET")
      (let ((dir (file-name-as-directory (expand-file-name directory))) found)
        (while (and dir (not found))
          (let* ((state (expand-file-name ".autosave" dir))
                 (attributes (file-attributes state 'integer))
                 (pointer (expand-file-name "agent.sock.path" state))
                 (socket (expand-file-name "agent.sock" state)))
            (cond
             ((and attributes (eq (file-attribute-type attributes) t)
                   (/= (file-attribute-user-id attributes) (user-uid)))
              (setq found (list :refused (format "the agent for %s is %s's (its state directory %s is theirs), and serves only them"
                                                 dir (autosave--user (file-attribute-user-id attributes)) state))))
             ((file-readable-p pointer)
              (let ((path (with-temp-buffer
                            (insert-file-contents pointer)
                            (string-trim (buffer-substring (point-min) (line-end-position))))))
                (unless (string-empty-p path) (setq found (autosave--checked path state pointer)))))
             ((eq (string-to-char (or (file-attribute-modes (file-attributes socket)) "")) ?s)
              (setq found (autosave--checked socket state state))))
            (let ((parent (file-name-directory (directory-file-name dir))))
              (setq dir (and parent (not (equal parent dir)) parent)))))
        found))))

(defun autosave--agent-for (socket state)
  "The agent at SOCKET (state folder STATE), connecting to it when it is not."
  (let ((agent (cdr (assoc socket autosave--agents))))
    (unless agent
      (setq agent (autosave--agent-create :socket socket :state state))
      (push (cons socket agent) autosave--agents))
    (unless (and (autosave--agent-process agent) (process-live-p (autosave--agent-process agent)))
      (autosave--connect agent))
    agent))

(defun autosave--connect (agent)
  "Connect to AGENT's socket, learn its root and subscribe to its events."
  (setf (autosave--agent-ready agent) nil
        (autosave--agent-partial agent) "")
  (condition-case err
      (let ((process (make-network-process
                      :name "autosave" :family 'local :service (autosave--agent-socket agent)
                      :coding 'utf-8-unix :noquery t
                      :filter (lambda (_process chunk) (autosave--take agent chunk))
                      :sentinel (lambda (process _change)
                                  (unless (process-live-p process)
                                    (autosave--closed agent process "the agent closed the connection"))))))
        (setf (autosave--agent-process agent) process)
        (autosave--request agent "status" nil
                           (lambda (_err result)
                             (setf (autosave--agent-root agent) (plist-get result :root))))
        (autosave--request agent "subscribe" nil
                           (lambda (err _result)
                             (unless err
                               (setf (autosave--agent-ready agent) t)
                               (funcall (plist-get autosave-connection-handlers :ready) agent)))))
    (file-error
     (setf (autosave--agent-process agent) nil)
     (funcall (plist-get autosave-connection-handlers :lost) agent
              (format "cannot connect to %s: %s" (autosave--agent-socket agent) (error-message-string err))))))

(defun autosave--take (agent chunk)
  "Split what arrived from AGENT (CHUNK) into messages and hand each over."
  (let ((data (concat (autosave--agent-partial agent) chunk)) (start 0))
    (while (string-match "\n" data start)
      (let ((line (substring data start (match-beginning 0))))
        (setq start (match-end 0))
        (autosave--dispatch agent line)))
    (setf (autosave--agent-partial agent) (substring data start))))

(defun autosave--dispatch (agent line)
  "Hand AGENT's message LINE to its request's callback or to the handlers."
  (let ((message (condition-case nil
                     (json-parse-string line :object-type 'plist :null-object nil
                                        :false-object :false :array-type 'list)
                   (error nil))))
    (when (consp message)
      (let ((id (plist-get message :id)))
        (cond
         (id
          (let ((callback (gethash id (autosave--agent-callbacks agent))))
            (remhash id (autosave--agent-callbacks agent))
            (when callback
              (with-demoted-errors "autosave: %S"
                (funcall callback (plist-get message :error) (plist-get message :result))))))
         ((equal (plist-get message :method) "event")
          (with-demoted-errors "autosave: %S"
            (funcall (plist-get autosave-connection-handlers :event) agent (plist-get message :params))))
         ((equal (plist-get message :method) "dropped")
          (autosave--closed agent (autosave--agent-process agent)
                            "the agent dropped this connection: it fell behind its events")))))))

(defun autosave--request (agent method params callback)
  "Send AGENT the request METHOD with PARAMS (a plist or nil).
CALLBACK gets (ERR RESULT): the JSON-RPC error as a plist, or the
result; ERR is (:message WHY) when the connection ended first."
  (let ((process (autosave--agent-process agent)))
    (if (not (and process (process-live-p process)))
        (funcall callback (list :message "not connected") nil)
      (let ((id (autosave--agent-next-id agent)))
        (setf (autosave--agent-next-id agent) (1+ id))
        (puthash id callback (autosave--agent-callbacks agent))
        (process-send-string
         process
         (concat (json-serialize (list :jsonrpc "2.0" :id id :method method
                                       :params (or params (make-hash-table))))
                 "\n"))))))

(defun autosave--closed (agent process reason)
  "The connection PROCESS to AGENT ended for REASON: callbacks learn it, in order."
  (when (eq process (autosave--agent-process agent))
    (setf (autosave--agent-process agent) nil
          (autosave--agent-ready agent) nil)
    (when (process-live-p process) (delete-process process))
    (let ((callbacks (autosave--agent-callbacks agent)) ids)
      (setf (autosave--agent-callbacks agent) (make-hash-table))
      (maphash (lambda (id _) (push id ids)) callbacks)
      (dolist (id (sort ids #'<))
        (with-demoted-errors "autosave: %S"
          (funcall (gethash id callbacks) (list :message reason) nil))))
    (funcall (plist-get autosave-connection-handlers :lost) agent reason)))

(provide 'autosave-connection)
;;; autosave-connection.el ends here
