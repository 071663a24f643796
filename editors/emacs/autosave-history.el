;;; autosave-history.el --- The versions the autosave agent keeps of a file -*- lexical-binding: t -*-

;; Copyright (C) the autosave authors
;; Package-Requires: ((emacs "27.1"))

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `autosave-history' lists the current file's versions, newest first, with
;; who wrote each (`emacs:PID', `cli', `external' for a change seen on disk,
;; a coding agent's `mcp:NAME'); RET shows a version's diff against the one
;; before it, `r' writes it back.  Everything is asked of the agent (its
;; `history', `show' and `restore' methods; see docs/history.md).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'tabulated-list)
(require 'diff)
(require 'autosave-connection)

(defvar-local autosave-history--agent nil
  "In a history buffer: the agent the versions were asked of.")
(defvar-local autosave-history--path nil
  "In a history buffer: the file, as the agent names it.")

(defun autosave-history--call (agent method params)
  "Ask AGENT METHOD with PARAMS and wait for the answer (up to 10 s).
Return the result, or signal a `user-error' with the agent's message."
  (let (answer)
    (autosave--request agent method params (lambda (err result) (setq answer (list err result))))
    (let ((deadline (+ (float-time) 10)))
      (while (and (not answer) (< (float-time) deadline))
        (accept-process-output nil 0.01)))
    (cond ((null answer) (user-error "Autosave: %s: no answer from the agent in 10 s" method))
          ((car answer) (user-error "Autosave: %s: %s" method (plist-get (car answer) :message)))
          (t (cadr answer)))))

(define-derived-mode autosave-history-mode tabulated-list-mode "Autosave-History"
  "The versions the agent keeps of one file, newest first.
\\<autosave-history-mode-map>\\[autosave-history-diff] shows a version's diff against the one before it,
\\[autosave-history-restore] writes it back (a new version itself, so it can be undone)."
  (setq tabulated-list-format [("Version" 8 nil) ("Time" 20 nil) ("Who" 18 nil)
                               ("Kind" 14 nil) ("Size" 9 nil) ("Lines" 0 nil)])
  (tabulated-list-init-header))

(define-key autosave-history-mode-map (kbd "RET") #'autosave-history-diff)
(define-key autosave-history-mode-map (kbd "r") #'autosave-history-restore)

(defun autosave-history--show (version)
  "The content of VERSION (an id) of the history buffer's file, or \"\"."
  (let ((result (autosave-history--call autosave-history--agent "show"
                                        (list :path autosave-history--path :version (format "%s" version)))))
    (or (plist-get result :content) "")))

(defun autosave-history-diff ()
  "Show the diff of the version at point against the version before it."
  (interactive)
  (let* ((version (tabulated-list-get-id))
         (next (save-excursion (forward-line 1) (tabulated-list-get-id)))
         (after (autosave-history--show version))
         (before (if next (autosave-history--show next) ""))
         (old (generate-new-buffer (format " *%s@%s*" autosave-history--path (or next "none"))))
         (new (generate-new-buffer (format " *%s@%s*" autosave-history--path version))))
    (unwind-protect
        (progn
          (with-current-buffer old (insert before))
          (with-current-buffer new (insert after))
          (display-buffer (diff-no-select old new nil t
                                          (get-buffer-create (format "*autosave diff %s@%s*"
                                                                     autosave-history--path version)))))
      (kill-buffer old)
      (kill-buffer new))))

(defun autosave-history-restore ()
  "Write the version at point back to the file, after asking."
  (interactive)
  (let ((version (tabulated-list-get-id)))
    (when (yes-or-no-p (format "Write version %s of %s back? " version autosave-history--path))
      (let ((result (autosave-history--call autosave-history--agent "restore"
                                            (list :path autosave-history--path :version (format "%s" version)))))
        (message "autosave: %s holds version %s again (revision %s)"
                 autosave-history--path version (plist-get result :revision))))))

(defun autosave-history--size (version)
  "VERSION's size for the list, or \"-\"."
  (let ((size (plist-get version :size))) (if (numberp size) (format "%d B" size) "-")))

;;;###autoload
(defun autosave-history ()
  "List the versions of the current buffer's file in the agent's history."
  (interactive)
  (let ((agent (and (boundp 'autosave--agent) autosave--agent))
        (path (and (boundp 'autosave--path) autosave--path)))
    (unless (and agent (autosave--agent-ready agent))
      (user-error "Autosave: this buffer is not kept by a running agent (M-x autosave-status says why)"))
    (let ((versions (plist-get (autosave-history--call agent "history" (list :path path :limit 1000))
                               :versions)))
      (with-current-buffer (get-buffer-create (format "*autosave history %s*" path))
        (autosave-history-mode)
        (setq autosave-history--agent agent
              autosave-history--path path
              tabulated-list-entries
              (mapcar (lambda (v)
                        (list (plist-get v :version)
                              (vector (format "%s" (plist-get v :version))
                                      (format-time-string "%F %T" (/ (plist-get v :timeMs) 1000.0))
                                      (or (plist-get v :who) "") (or (plist-get v :kind) "")
                                      (autosave-history--size v)
                                      (if (numberp (plist-get v :added))
                                          (format "+%d -%d" (plist-get v :added) (plist-get v :removed))
                                        ""))))
                      versions))
        (tabulated-list-print)
        (pop-to-buffer (current-buffer))))))

(provide 'autosave-history)
;;; autosave-history.el ends here
