;;; autosave.el --- Edit files through a running autosave agent -*- lexical-binding: t -*-

;; Copyright (C) the autosave authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: files, convenience

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `autosave-mode' puts a file-visiting buffer in the buffer of an autosave
;; agent (a background program that saves a project folder's files, merges
;; outside changes and never loses an edit; see docs/emacs.md).  Each change
;; you make goes to the agent as a ranged edit at once, in order, and the
;; agent saves it after its quiet window: no `save-buffer' is needed, and the
;; buffer shows unmodified once the agent has saved.  What `sed', `git' or a
;; coding agent changes on disk arrives in the buffer as the smallest
;; replacement of the changed regions: point, marks and window starts stay,
;; the change is one undo step of its own, and Emacs never asks whether the
;; file "changed on disk".
;;
;; `global-autosave-mode' turns `autosave-mode' on in every file buffer below
;; a folder where an agent runs (or starts one when `autosave-start-agent' is
;; non-nil).  Commands: `autosave-status', `autosave-conflicts',
;; `autosave-history'.
;;
;; The text kept in step is the agent's text at the last revision both sides
;; agree on (the "shadow", kept in a hidden buffer).  One edit is on its way
;; per buffer at a time, carrying the revision it was made on (`ifRevision'),
;; so an edit never lands on a text it was not made for; when the agent's text
;; changed otherwise, the buffer resyncs: it reads the agent's text, merges it
;; line by line with its own (base: the shadow), shows the difference and
;; sends back what the agent lacks.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'json)
(require 'autosave-connection)

(autoload 'autosave-history "autosave-history" "List the versions the agent keeps of the current file." t)

(defgroup autosave nil
  "Edit files through a running autosave agent."
  :group 'files
  :prefix "autosave-")

(defcustom autosave-program "autosave"
  "The autosave command, used to start an agent (`autosave-start-agent')."
  :type 'string)

(defcustom autosave-start-agent nil
  "Whether `global-autosave-mode' starts an agent where none runs.
When non-nil, visiting a file below a folder with no agent runs
`autosave run' for the file's project (its version-control root,
else its directory) as a subprocess of Emacs."
  :type 'boolean)

(defcustom autosave-keep 'buffer
  "The side that keeps the path when the disk and unsaved text overlap.
`buffer': your text stays in the buffer and the disk's version goes
to a conflict copy.  `agent': the agent's `conflicts.keep' decides."
  :type '(choice (const :tag "The buffer's text" buffer)
                 (const :tag "The agent's configuration" agent)))

(defcustom autosave-reconnect-interval 1.0
  "Seconds between looks for an agent that went away or is not there yet."
  :type 'number)

(defcustom autosave-save-timeout 10.0
  "Seconds `save-buffer' waits for the agent to say the file is durable."
  :type 'number)

(defconst autosave-client (format "emacs:%d" (emacs-pid))
  "The name this Emacs's edits carry in the agent's events and history.")

(defvar autosave--conflicts nil
  "The conflicts seen since Emacs started, newest first.
Each is a plist (:time :path :copy :kind :kept) with absolute paths.")

(defvar autosave--reconnect-timer nil
  "The timer looking for agents, while some buffer waits for one.")

;;;; Buffer-local state

(defvar-local autosave--agent nil
  "The `autosave--agent' this buffer is kept in step with, or nil.")
(defvar-local autosave--path nil
  "The buffer's file as the agent names it (relative to its root).")
(defvar-local autosave--revision nil
  "The agent's revision of the text in `autosave--shadow'.")
(defvar-local autosave--shadow nil
  "A hidden buffer holding the agent's text at `autosave--revision'.
Line breaks in it are the buffer's own (\"\\n\"), as Emacs shows them.
It outlives a change of major mode, which turns the mode off and on.")
(put 'autosave--shadow 'permanent-local t)
(defvar-local autosave--eol 'unix
  "The line break of the agent's text: `unix' or `dos'.")
(defvar-local autosave--exists t
  "Whether the agent has a file for this buffer (nil for a new file).")
(defvar-local autosave--batch nil
  "What changed since the last edit sent: nil, `full', or a hint.
A hint is a list (PREFIX SUFFIX DELTA): the changes lie after the
first PREFIX and before the last SUFFIX characters, and changed the
size by DELTA.")
(defvar-local autosave--in-flight nil
  "Non-nil while an edit is on its way: (PREFIX SUFFIX NEW).")
(defvar-local autosave--needs-resync t
  "Non-nil when the agent's text must be read and merged again.")
(defvar-local autosave--resyncing nil
  "Non-nil while a resync waits for the agent's answer.")
(defvar-local autosave--takes-theirs nil
  "Non-nil when the next resync shows the agent's text as it is.")
(defvar-local autosave--applying nil
  "Non-nil while the buffer is being changed to show the agent's text.")
(defvar-local autosave--failures 0
  "Edits refused in a row for another reason than a stale revision.")
(defvar-local autosave--flush-timer nil
  "The timer that sends this turn's changes.")
(defvar-local autosave--saved-settings nil
  "Settings `autosave-mode' changed, restored when it is turned off.")
(defvar-local autosave--reason nil
  "Why the buffer is not kept in step with an agent, for `autosave-status'.")

;;;; Texts

(defun autosave--supported-coding-p (coding)
  "Whether the agent can keep a buffer read with CODING.
The agent holds UTF-8 text with \"\\n\" or \"\\r\\n\" line breaks."
  (and (memq (coding-system-base (or coding 'undecided))
             '(utf-8 undecided prefer-utf-8 us-ascii))
       (memq (coding-system-eol-type coding) '(0 1))))

(defun autosave--text (buffer)
  "The whole text of BUFFER, without properties."
  (with-current-buffer buffer
    (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))

(defun autosave--to-agent (text)
  "Return TEXT with the agent's line breaks (`autosave--eol')."
  (if (eq autosave--eol 'dos) (replace-regexp-in-string "\n" "\r\n" text t t) text))

(defun autosave--eol-of (content)
  "Return the line break of CONTENT: `dos', `unix', or nil (no line at all).
A text is `dos' when every \"\\n\" in it follows a \"\\r\"."
  (cond ((not (string-match-p "\n" content)) nil)
        ((and (string-match-p "\r\n" content)
              (not (string-match-p "\\(?:\\`\\|[^\r]\\)\n" content)))
         'dos)
        (t 'unix)))

(defun autosave--same-text-p (a b)
  "Whether buffers A and B hold the same text."
  (and (= (buffer-size a) (buffer-size b))
       (with-current-buffer a
         (save-restriction
           (widen)
           (zerop (compare-buffer-substrings a nil nil b nil nil))))))

(defun autosave--common-ends (old new)
  "The lengths of the common start and end of buffers OLD and NEW.
The end does not overlap the start in either."
  (let* ((old-size (buffer-size old)) (new-size (buffer-size new))
         (limit (min old-size new-size))
         (prefix (let ((c (with-current-buffer old
                            (compare-buffer-substrings old 1 (1+ old-size) new 1 (1+ new-size)))))
                   (if (zerop c) limit (1- (abs c)))))
         (suffix 0))
    (while (and (< (+ prefix suffix) limit)
                (eq (with-current-buffer old (char-before (- (1+ old-size) suffix)))
                    (with-current-buffer new (char-before (- (1+ new-size) suffix)))))
      (setq suffix (1+ suffix)))
    (list prefix suffix)))

(defun autosave--position (offset eol)
  "The agent's position of character OFFSET (0-based) in the current buffer.
EOL is the line break of the agent's text (`unix' or `dos').
A list (LINE . CHARACTER), counting line breaks as the agent does:
\"\\n\", \"\\r\\n\" and a lone \"\\r\"; a buffer \"\\n\" is one break even
where the agent's text has \"\\r\\n\"."
  (save-excursion
    (save-restriction
      (widen)
      (let ((pos (1+ offset)))
        (if (not (progn (goto-char (point-min)) (search-forward "\r" pos t)))
            (progn (goto-char pos)
                   (cons (1- (line-number-at-pos pos t)) (- pos (line-beginning-position))))
          (let ((line 0) (start (point-min))
                (break (if (eq eol 'dos) "[\r\n]" "\r\n\\|[\r\n]")))
            (goto-char (point-min))
            (while (re-search-forward break pos t)
              (setq line (1+ line) start (point)))
            (cons line (- pos start))))))))

(defun autosave--merge (base ours theirs)
  "Merge texts OURS and THEIRS, both made from BASE, line by line.
Return the merged text, or nil when their changes overlap (or the
merge tool, diff3 from Debian's diffutils, is missing)."
  (cond ((string= ours base) theirs)
        ((or (string= theirs base) (string= theirs ours)) ours)
        ((not (executable-find "diff3")) nil)
        (t
         (let ((files (mapcar (lambda (_) (make-temp-file "autosave-merge-")) '(1 2 3)))
               (coding-system-for-write 'utf-8-unix)
               (coding-system-for-read 'utf-8-unix))
           (unwind-protect
               (progn
                 (cl-mapc (lambda (file text) (write-region text nil file nil 'silent))
                          files (list ours base theirs))
                 (with-temp-buffer
                   (when (eq 0 (apply #'call-process "diff3" nil t nil "--merge" files))
                     (buffer-string))))
             (mapc #'delete-file files))))))

;;;; Sending what was typed

(defun autosave--connected-p ()
  "Whether the current buffer's agent is connected and ready."
  (and autosave--agent (autosave--agent-ready autosave--agent)))

(defun autosave--after-change (beg end old-length)
  "Record a change of the buffer.
BEG, END and OLD-LENGTH are as in `after-change-functions'."
  (unless autosave--applying
    (when (autosave--connected-p)
      (let ((prefix (1- beg)) (suffix (- (1+ (buffer-size)) end))
            (delta (- end beg old-length)))
        (setq autosave--batch
              (pcase autosave--batch
                ('nil (list prefix suffix delta))
                ('full 'full)
                (`(,p ,s ,d) (list (min p prefix) (min s suffix) (+ d delta)))))))
    (autosave--schedule)))

(defun autosave--schedule ()
  "Send, at the next turn of the event loop, what changed in this turn."
  (unless autosave--flush-timer
    (setq autosave--flush-timer
          (run-at-time 0 nil #'autosave--flush-buffer (current-buffer)))))

(defun autosave--flush-buffer (buffer)
  "Send what changed in BUFFER, if it still lives."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq autosave--flush-timer nil)
      (autosave--flush))))

(defun autosave--edit-region ()
  "The region that differs from the shadow: (PREFIX SUFFIX), in characters.
Taken from the recorded changes when they add up, else from the texts."
  (let* ((size (buffer-size)) (shadow-size (buffer-size autosave--shadow))
         (ends (pcase autosave--batch
                 (`(,p ,s ,d)
                  (and (= size (+ shadow-size d))
                       (list (min p size shadow-size)
                             (min s (- size (min p size)) (- shadow-size (min p shadow-size))))))))
         (ends (or ends (save-restriction (widen) (autosave--common-ends autosave--shadow (current-buffer))))))
    (pcase-let ((`(,prefix ,suffix) ends))
      ;; The agent refuses a position inside a "\r\n" (a unix buffer shows it as two characters).
      (when (eq autosave--eol 'unix)
       (with-current-buffer autosave--shadow
        (when (and (> prefix 0) (eq (char-after prefix) ?\r) (eq (char-after (1+ prefix)) ?\n))
          (setq prefix (1- prefix)))
        (let ((end (- (1+ shadow-size) suffix)))
          (when (and (> suffix 0) (eq (char-before end) ?\r) (eq (char-after end) ?\n))
            (setq suffix (1- suffix))))))
      (list prefix suffix))))

(defun autosave--flush ()
  "Send what changed since the last edit, unless an edit is on its way."
  (when (and autosave--agent (not autosave--in-flight) (not autosave--resyncing)
             (autosave--connected-p))
    (cond
     (autosave--needs-resync (autosave--resync))
     ((not autosave--exists)
      (unless (autosave--same-text-p autosave--shadow (current-buffer))
        (autosave--send-write)))
     (autosave--batch
      (pcase-let* ((`(,prefix ,suffix) (autosave--edit-region))
                   (new (save-restriction
                          (widen)
                          (buffer-substring-no-properties (1+ prefix) (- (1+ (buffer-size)) suffix)))))
        (setq autosave--batch nil)
        (let* ((eol autosave--eol)
               (start (with-current-buffer autosave--shadow (autosave--position prefix eol)))
               (end (with-current-buffer autosave--shadow
                      (autosave--position (- (buffer-size) suffix) eol))))
          (unless (and (equal start end) (string-empty-p new))
            (autosave--send-edit start end new (list prefix suffix new)))))))))

(defun autosave--send-edit (start end new change)
  "Send one edit replacing START to END of the agent's text with NEW.
CHANGE is what the shadow takes in once the agent accepts it."
  (let ((params (list :path autosave--path :positionEncoding "utf-32"
                      :edits (vector (list :start (list :line (car start) :character (cdr start))
                                           :end (list :line (car end) :character (cdr end))
                                           :text (autosave--to-agent new)))
                      :ifRevision (or autosave--revision :null) :client autosave-client))
        (buffer (current-buffer)))
    (setq autosave--in-flight change)
    (autosave--request autosave--agent "edit" params
                       (lambda (err result) (autosave--answered buffer err result)))))

(defun autosave--send-write ()
  "Send the whole text, a new file's first content (an edit needs a file)."
  (let ((buffer (current-buffer)) (text (autosave--text (current-buffer))))
    (setq autosave--in-flight (list 0 0 text 'whole) autosave--batch nil)
    (autosave--request autosave--agent "write"
                       (list :path autosave--path :content (autosave--to-agent text)
                             :ifRevision (or autosave--revision :null) :client autosave-client)
                       (lambda (err result)
                         (when (and (not err) (buffer-live-p buffer))
                           (with-current-buffer buffer (setq autosave--exists t)))
                         (autosave--answered buffer err result)))))

(defun autosave--answered (buffer err result)
  "The agent's answer to BUFFER's edit: ERR, or RESULT (its revision)."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (let ((change autosave--in-flight))
        (setq autosave--in-flight nil)
        (when autosave--agent
          (if err
              (let ((reason (plist-get (plist-get err :data) :reason)))
                (unless (equal reason "staleRevision")
                  (setq autosave--failures (1+ autosave--failures)))
                (if (>= autosave--failures 3)
                    (autosave--give-up (format "the agent refused its edits: %s" (plist-get err :message)))
                  (setq autosave--needs-resync t)))
            (setq autosave--failures 0
                  autosave--revision (plist-get result :revision))
            (pcase-let ((`(,prefix ,suffix ,new ,whole) change))
              (with-current-buffer autosave--shadow
                (if whole
                    (progn (erase-buffer) (insert new))
                  (delete-region (1+ prefix) (- (1+ (buffer-size)) suffix))
                  (goto-char (1+ prefix))
                  (insert new)))))
          (autosave--flush))))))

(defun autosave--settled-p ()
  "Whether nothing typed is waiting to reach the agent."
  (and (not autosave--in-flight) (not autosave--batch) (not autosave--needs-resync)
       (not autosave--resyncing) (null autosave--flush-timer)))

;;;; Taking in the agent's text

(defun autosave--resync ()
  "Read the agent's text and bring the buffer and it together."
  (unless (or autosave--resyncing autosave--in-flight)
    (setq autosave--needs-resync nil autosave--resyncing t autosave--batch nil)
    (let ((buffer (current-buffer)) status)
      (autosave--request autosave--agent "open"
                         (list :path autosave--path :keep (if (eq autosave-keep 'agent) :null "buffer"))
                         (lambda (err result) (setq status (list err result))))
      (autosave--request autosave--agent "read" (list :path autosave--path)
                         (lambda (err result)
                           (when (buffer-live-p buffer)
                             (with-current-buffer buffer
                               (setq autosave--resyncing nil)
                               (when autosave--agent
                                 (let ((err (or (car status) err)))
                                   (if err (autosave--refused err)
                                     (autosave--adopt result (cadr status))))))))))))

(defun autosave--refused (err)
  "Give the buffer back to Emacs when the agent refused to open it (ERR)."
  (when (autosave--connected-p)
    (if (equal (plist-get (plist-get err :data) :reason) "tooLarge")
        (autosave--give-up "it is larger than the agent's limits.maxFileBytes; Emacs saves it itself")
      (autosave--give-up (format "the agent refused to open it: %s" (plist-get err :message))))))

(defun autosave--adopt (answer status)
  "Merge the agent's text (ANSWER to `read') into the buffer.
STATUS is the answer to `open': whether the agent's buffer is dirty."
  (if (plist-get answer :contentBase64)
      (autosave--give-up "it is not UTF-8 text; Emacs saves it itself")
    (let* ((content (or (plist-get answer :content) ""))
           (eol (or (autosave--eol-of content) autosave--eol))
           (theirs (if (eq eol 'dos) (replace-regexp-in-string "\r\n" "\n" content t t) content))
           (ours (autosave--text (current-buffer)))
           (base (autosave--text autosave--shadow))
           (target (if autosave--takes-theirs theirs (autosave--merge base ours theirs)))
           copy)
      (cond (autosave--takes-theirs
             ;; The agent kept the disk's version; what was typed since its copy goes to one of ours.
             (unless (string= ours base) (setq copy (autosave--keep-aside ours)))
             (setq autosave--takes-theirs nil))
            ((null target)
             ;; Both changed the same lines while an edit was on its way: the buffer keeps what
             ;; the person sees, the agent's version is copied aside.
             (setq target ours copy (autosave--keep-aside content))))
      (setq autosave--path (or (plist-get answer :path) autosave--path)
            autosave--revision (plist-get answer :revision)
            autosave--exists (not (eq (plist-get answer :exists) :false)))
      (unless (eq eol autosave--eol)
        (setq autosave--eol eol)
        (set-buffer-file-coding-system
         (coding-system-change-eol-conversion buffer-file-coding-system eol) t t))
      (unless (string= target ours) (autosave--show target))
      (with-current-buffer autosave--shadow (erase-buffer) (insert theirs))
      (setq autosave--batch (if (string= target theirs) nil 'full))
      (when copy
        (autosave--note-conflict
         (list :path autosave--path :kind "overlap" :copy copy
               :kept (if (string= target ours) "buffer" "disk"))))
      (when (and (string= target theirs) autosave--exists (not (plist-get status :dirty)))
        (set-buffer-modified-p nil))
      (autosave--flush))))

(defun autosave--show (target)
  "Change the buffer to TARGET as one undo step of its own.
Only the regions that differ are replaced, so point, marks and window
starts in the rest stay where they were."
  (let ((source (generate-new-buffer " *autosave-target*"))
        (autosave--applying t)
        (inhibit-read-only t))
    (unwind-protect
        (progn
          (with-current-buffer source (insert target))
          (save-restriction
            (widen)
            ;; Closes the person's undo step: this change gets one of its own.
            (undo-boundary)
            (let ((group (prepare-change-group)))
              (activate-change-group group)
              (replace-buffer-contents source 3.0)
              (undo-amalgamate-change-group group)
              (accept-change-group group))
            (undo-boundary)))
      (kill-buffer source))))

(defun autosave--keep-aside (content)
  "Write CONTENT to a conflict copy of the buffer's file; return its path."
  (let* ((state (autosave--agent-state autosave--agent))
         (folder (if state (expand-file-name "conflicts" state)
                   (locate-user-emacs-file "autosave-conflicts")))
         (name (expand-file-name
                (format "%s.%s.emacs" (string-trim-left autosave--path "/")
                        (format-time-string "%Y%m%d-%H%M%S" nil t))
                folder)))
    (make-directory (file-name-directory name) t)
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region content nil name nil 'silent))
    name))

;;;; The agent's events

(defun autosave--session-buffers (agent path)
  "The buffers kept in step with AGENT whose file the agent names PATH."
  (cl-remove-if-not (lambda (buffer)
                      (and (buffer-live-p buffer)
                           (equal (buffer-local-value 'autosave--path buffer) path)))
                    (autosave--agent-buffers agent)))

(defun autosave--event (agent event)
  "Handle EVENT, a notification from AGENT (a plist)."
  (let ((kind (plist-get event :event)))
    (if (equal kind "moved")
        (dolist (buffer (autosave--session-buffers agent (plist-get event :from)))
          (with-current-buffer buffer
            (setq autosave--path (plist-get event :to))
            (let ((autosave--applying t))
              (set-visited-file-name (autosave--absolute agent autosave--path) t t))
            (set-visited-file-modtime 0)
            (message "autosave: %s was renamed to %s; the buffer follows it"
                     (plist-get event :from) autosave--path)))
      (dolist (buffer (autosave--session-buffers agent (plist-get event :path)))
        (with-current-buffer buffer
          (autosave--buffer-event kind event))))))

(defun autosave--buffer-event (kind event)
  "Handle EVENT of KIND for the current buffer."
  (let ((revision (plist-get event :revision)))
    (pcase kind
      ("edited"
       ;; Another client, or another buffer on the same file: not this buffer's edit on its way.
       (unless (or (equal revision autosave--revision)
                   (and autosave--in-flight (equal (plist-get event :client) autosave-client)))
         (setq autosave--needs-resync t)
         (autosave--flush)))
      ((or "reloaded" "merged")
       (unless (equal revision autosave--revision)
         (setq autosave--needs-resync t)
         (autosave--flush)))
      ("conflict"
       (pcase (plist-get event :kind)
         ("removed" (message "autosave: %s was removed on disk under unsaved edits; the agent writes it again"
                             autosave--path))
         ("replaced" (autosave--note-conflict event)
          (autosave--give-up "another file was renamed over it"))
         (_ (autosave--note-conflict event)
            (unless (equal (plist-get event :kept) "buffer")
              (setq autosave--takes-theirs t autosave--needs-resync t)
              (autosave--flush)))))
      ("removed"
       (autosave--give-up "it was removed on disk; the buffer keeps its text and `save-buffer' writes it again"))
      ("saved"
       (when (and (equal revision autosave--revision) (autosave--settled-p))
         (if (autosave--same-text-p autosave--shadow (current-buffer))
             (set-buffer-modified-p nil)
           (setq autosave--needs-resync t)
           (autosave--flush)))))))

(defun autosave--absolute (agent path)
  "PATH (as AGENT names it) as an absolute file name."
  (if (or (file-name-absolute-p path) (null (autosave--agent-root agent))) path
    (expand-file-name path (autosave--agent-root agent))))

(defun autosave--note-conflict (event)
  "Remember the conflict EVENT names and warn once, naming the copy."
  (let* ((agent autosave--agent)
         (copy (and (stringp (plist-get event :copy)) (autosave--absolute agent (plist-get event :copy))))
         (kept (plist-get event :kept)))
    (push (list :time (format-time-string "%H:%M:%S") :path (autosave--absolute agent (plist-get event :path))
                :copy copy :kind (plist-get event :kind) :kept kept)
          autosave--conflicts)
    (display-warning
     'autosave
     (format "%s changed on disk where you were editing too (%s): %s" (plist-get event :path)
             (plist-get event :kind)
             (if (equal kept "buffer")
                 (format "your text stays here; the disk's version is in %s" (or copy "?"))
               (format "the buffer shows the disk's version; your text is in %s" (or copy "?")))))))

;;;; Attaching buffers

(defun autosave--give-up (why)
  "Stop keeping the buffer in step, saying WHY; Emacs is to save it itself.
Nothing is waited for: this runs while the agent's answers are read."
  (message "autosave: %s: %s" (buffer-name) why)
  (when autosave--agent
    (setf (autosave--agent-buffers autosave--agent)
          (delq (current-buffer) (autosave--agent-buffers autosave--agent))))
  (setq autosave--agent nil)
  (autosave-mode -1)
  (setq autosave--reason why))

(defun autosave--take-writes ()
  "Leave saving the buffer and taking in outside edits to the agent.
Emacs's own \"changed on disk\" check would only offer to load an older
text over the buffer: the visited file's time is unknown meanwhile."
  (set-visited-file-modtime 0))

(defun autosave--give-back-writes ()
  "Let Emacs save the buffer itself again."
  (when (and buffer-file-name (file-exists-p buffer-file-name))
    (set-visited-file-modtime)))

(defun autosave--attach ()
  "Keep the current buffer in step with the agent of its folder, or wait for one."
  (let ((found (autosave--find (file-name-directory buffer-file-name))))
    (cond
     ((plist-get found :refused)
      (setq autosave--reason (plist-get found :refused))
      (message "autosave: %s; Emacs saves files itself" autosave--reason)
      (autosave--wait))
     ((null found)
      (setq autosave--reason (format "no agent runs for %s" default-directory))
      (autosave--wait))
     (t
      (setq autosave--reason nil)
      (let ((agent (autosave--agent-for (plist-get found :socket) (plist-get found :state))))
        (setq autosave--agent agent
              autosave--path (expand-file-name buffer-file-name))
        (cl-pushnew (current-buffer) (autosave--agent-buffers agent))
        (cond ((autosave--agent-ready agent)
               (autosave--take-writes)
               (autosave--resync))
              ((not (autosave--agent-process agent))
               (setq autosave--reason (format "cannot connect to %s" (autosave--agent-socket agent)))
               (autosave--wait))))))))

(defun autosave--detach (&optional why)
  "Stop keeping the buffer in step, after sending what was typed.
WHY, when given, is kept for `autosave-status'."
  (when (and autosave--agent (autosave--connected-p))
    (autosave--flush)
    (autosave--wait-until (lambda () (or (autosave--settled-p) (not (autosave--connected-p)))) 2))
  (when autosave--agent
    (setf (autosave--agent-buffers autosave--agent)
          (delq (current-buffer) (autosave--agent-buffers autosave--agent)))
    (autosave--give-back-writes))
  (when (timerp autosave--flush-timer) (cancel-timer autosave--flush-timer))
  (setq autosave--agent nil autosave--flush-timer nil autosave--in-flight nil
        autosave--batch nil autosave--reason why)
  (when (buffer-live-p autosave--shadow) (kill-buffer autosave--shadow))
  (setq autosave--shadow nil))

(defun autosave--wait-until (condition seconds)
  "Take in the agent's answers until CONDITION is non-nil or SECONDS pass.
Return CONDITION's last value."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall condition))) (< (float-time) deadline))
      (accept-process-output nil 0.01))
    value))

(defvar autosave--waiting nil
  "Buffers in `autosave-mode' waiting for an agent.")

(defun autosave--wait ()
  "Look for an agent for the current buffer every `autosave-reconnect-interval'."
  (cl-pushnew (current-buffer) autosave--waiting)
  (unless autosave--reconnect-timer
    (setq autosave--reconnect-timer
          (run-at-time autosave-reconnect-interval autosave-reconnect-interval
                       #'autosave--look-for-agents))))

(defun autosave--look-for-agents ()
  "Attach every buffer that waits for an agent to its agent, if up now."
  (dolist (buffer autosave--waiting)
    (setq autosave--waiting (delq buffer autosave--waiting))
    (when (and (buffer-live-p buffer) (buffer-local-value 'autosave-mode buffer))
      (with-current-buffer buffer
        (if (and autosave--agent (autosave--agent-process autosave--agent)
                 (process-live-p (autosave--agent-process autosave--agent)))
            nil
          (when autosave--agent
            (setf (autosave--agent-buffers autosave--agent)
                  (delq buffer (autosave--agent-buffers autosave--agent))))
          (autosave--attach)))))
  (when (and (null autosave--waiting) autosave--reconnect-timer)
    (cancel-timer autosave--reconnect-timer)
    (setq autosave--reconnect-timer nil)))

(defun autosave--connected (agent)
  "Bring every buffer of AGENT up to date, now that it is ready."
  (dolist (buffer (autosave--agent-buffers agent))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (autosave--take-writes)
        (setq autosave--needs-resync t)
        (autosave--flush)))))

(defun autosave--lost (agent reason)
  "Give AGENT's buffers back to Emacs until it is back; REASON is why it left."
  (let ((buffers (cl-remove-if-not #'buffer-live-p (autosave--agent-buffers agent))))
    (dolist (buffer buffers)
      (with-current-buffer buffer
        (setq autosave--in-flight nil autosave--resyncing nil autosave--needs-resync t
              autosave--batch nil)
        (autosave--give-back-writes)
        (autosave--wait)))
    (when buffers
      (display-warning 'autosave
                       (format "lost the agent (%s); Emacs saves your %d buffer(s) itself until it is back"
                               reason (length buffers))))))

(setq autosave-connection-handlers
      (list :event #'autosave--event :ready #'autosave--connected :lost #'autosave--lost))

;;;; Saving

(defun autosave--write-contents ()
  "Save the buffer through the agent; return non-nil once the file is durable.
Return nil (Emacs writes the file) when no agent follows the buffer."
  (when (and autosave--agent (autosave--connected-p)
             (string= (expand-file-name buffer-file-name)
                      (autosave--absolute autosave--agent autosave--path)))
    (autosave--flush)
    (unless (autosave--wait-until (lambda () (or (autosave--settled-p) (not (autosave--connected-p))))
                                  autosave-save-timeout)
      (error "Autosave: %s was not saved: the agent did not take the edits in time" autosave--path))
    (let (answer)
      (autosave--request autosave--agent "save" (list :paths (vector autosave--path))
                         (lambda (err _result) (setq answer (list (or err 'saved)))))
      (autosave--wait-until (lambda () answer) autosave-save-timeout)
      (unless (eq (car answer) 'saved)
        (error "Autosave: %s was not saved: %s" autosave--path
               (if answer (plist-get (car answer) :message) "no answer in time")))
      (set-buffer-modified-p nil)
      (autosave--take-writes)
      (message "Saved by autosave (durable): %s" autosave--path)
      ;; `basic-save-buffer' takes this as the coding the file was written with: the agent kept
      ;; the buffer's own (the answers read meanwhile would say utf-8-unix).
      (setq last-coding-system-used buffer-file-coding-system)
      t)))

(defun autosave--flush-all ()
  "Send everything typed before Emacs exits."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when autosave--agent (autosave--flush))))
  (autosave--wait-until
   (lambda ()
     (cl-every (lambda (buffer)
                 (with-current-buffer buffer
                   (or (null autosave--agent) (not (autosave--connected-p)) (autosave--settled-p))))
               (buffer-list)))
   2))

;;;; The modes

;;;###autoload
(define-minor-mode autosave-mode
  "Keep this file buffer in step with the autosave agent of its folder.
Each change goes to the agent as it is made, and the agent saves it
after its quiet window; the buffer shows unmodified once it has.
Changes on disk arrive in the buffer as the smallest replacement,
one undo step of their own.  With no agent the mode waits for one,
and Emacs saves the file itself meanwhile."
  :lighter (:eval (autosave--lighter))
  :group 'autosave
  (if autosave-mode
      (cond
       ((not buffer-file-name)
        (setq autosave-mode nil)
        (message "autosave: this buffer visits no file"))
       ((not (autosave--supported-coding-p buffer-file-coding-system))
        (setq autosave-mode nil)
        (message "autosave: %s is read as %s, and the agent keeps UTF-8 text with \\n or \\r\\n line breaks; Emacs saves it itself"
                 (buffer-name) buffer-file-coding-system))
       (t
        (setq autosave--eol (if (eq (coding-system-eol-type buffer-file-coding-system) 1) 'dos 'unix)
              autosave--needs-resync t autosave--exists t autosave--revision nil
              autosave--batch nil autosave--failures 0
              autosave--saved-settings (list buffer-auto-save-file-name create-lockfiles))
        (unless autosave--shadow
          (let ((text (autosave--text (current-buffer))))
            (setq autosave--shadow (generate-new-buffer (format " *autosave-shadow %s*" (buffer-name))))
            (with-current-buffer autosave--shadow (insert text))))
        ;; The agent's journal keeps every edit: Emacs's #file# copies and .#file locks would
        ;; only be more files in the folder the agent watches.
        (auto-save-mode -1)
        (setq-local create-lockfiles nil)
        (add-hook 'after-change-functions #'autosave--after-change nil t)
        (add-hook 'write-contents-functions #'autosave--write-contents nil t)
        (add-hook 'kill-buffer-hook #'autosave--on-kill nil t)
        (add-hook 'kill-emacs-hook #'autosave--flush-all)
        (autosave--attach)))
    (remove-hook 'after-change-functions #'autosave--after-change t)
    (remove-hook 'write-contents-functions #'autosave--write-contents t)
    (remove-hook 'kill-buffer-hook #'autosave--on-kill t)
    (setq autosave--waiting (delq (current-buffer) autosave--waiting))
    (autosave--detach "autosave-mode is off")
    (when autosave--saved-settings
      (setq-local create-lockfiles (nth 1 autosave--saved-settings))
      (when (car autosave--saved-settings) (auto-save-mode 1))
      (setq autosave--saved-settings nil))))

(defun autosave--on-kill ()
  "Send what was typed before the buffer is killed."
  (autosave--detach "killed"))

(defun autosave--lighter ()
  "The mode line's word: \" Auto\", or \" Auto?\" while no agent follows the buffer."
  (if (autosave--connected-p) " Auto" " Auto?"))

(defun autosave--project-root (directory)
  "The folder an agent started for DIRECTORY watches.
Its repository's root, or DIRECTORY itself."
  (or (locate-dominating-file directory ".git") directory))

(defun autosave--start-agent-for (directory)
  "Start `autosave run' for DIRECTORY's project and wait for its socket.
Return the socket found, or nil (said why)."
  (let* ((root (expand-file-name (autosave--project-root directory)))
         (process (make-process :name (format "autosave-agent %s" root)
                                :buffer (generate-new-buffer (format " *autosave agent %s*" root))
                                :command (list autosave-program "run" root)
                                :noquery t :connection-type 'pipe)))
    (or (autosave--wait-until (lambda () (or (not (process-live-p process))
                                             (plist-get (autosave--find directory) :socket)))
                              20)
        (progn (message "autosave: `%s run %s' did not start an agent in 20 s" autosave-program root)
               nil))
    (and (process-live-p process) (autosave--find directory))))

(defun autosave--turn-on ()
  "Turn on `autosave-mode' in a file buffer below a folder with an agent."
  (when (and buffer-file-name (not (file-remote-p buffer-file-name)))
    (let ((found (autosave--find (file-name-directory buffer-file-name))))
      (when (and (null found) autosave-start-agent (executable-find autosave-program))
        (setq found (autosave--start-agent-for (file-name-directory buffer-file-name))))
      (when (and (plist-get found :socket) (not autosave-mode)) (autosave-mode 1)))))

;;;###autoload
(define-globalized-minor-mode global-autosave-mode autosave-mode autosave--turn-on
  :group 'autosave)

;;;; Commands

;;;###autoload
(defun autosave-status ()
  "Say whether an agent follows this buffer, its revision and when it is saved."
  (interactive)
  (cond
   ((not autosave-mode)
    (message "autosave: not on in this buffer%s" (if autosave--reason (concat ": " autosave--reason) "")))
   ((not (autosave--connected-p))
    (message "autosave: %s: waiting for an agent (%s); Emacs saves the file itself meanwhile"
             (buffer-name) (or autosave--reason "connecting")))
   (t
    (let (answer)
      (autosave--request autosave--agent "open" (list :path autosave--path)
                         (lambda (err result) (setq answer (list err result))))
      (autosave--wait-until (lambda () answer) 2)
      (let* ((result (cadr answer)) (pending (plist-get result :pendingSaveMs)))
        (message "autosave: %s · revision %s · %s%s" autosave--path
                 (or (plist-get result :revision) autosave--revision)
                 (cond ((null answer) "no answer")
                       ((car answer) (plist-get (car answer) :message))
                       ((not (plist-get result :dirty)) "saved")
                       (pending (format "saving in %s ms" pending))
                       (t "unsaved"))
                 (if (autosave--settled-p) "" " · edits on their way")))))))

;;;###autoload
(defun autosave-conflicts ()
  "List the conflict copies made since Emacs started; RET visits one."
  (interactive)
  (with-current-buffer (get-buffer-create "*autosave-conflicts*")
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert (if autosave--conflicts "Conflicts since Emacs started (newest first); RET visits the copy.\n\n"
                "No conflicts since Emacs started.\n"))
      (dolist (c autosave--conflicts)
        (insert (format "%s  %s conflict on %s, kept the %s: "
                        (plist-get c :time) (plist-get c :kind) (plist-get c :path) (plist-get c :kept)))
        (if (plist-get c :copy)
            (insert-text-button (plist-get c :copy) 'action
                                (lambda (button) (find-file (button-label button))))
          (insert "no copy"))
        (insert "\n")))
    (special-mode)
    (goto-char (point-min))
    (pop-to-buffer (current-buffer))))

(provide 'autosave)
;;; autosave.el ends here
