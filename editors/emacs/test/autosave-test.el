;;; autosave-test.el --- autosave.el with the real agent -*- lexical-binding: t -*-

;;; Commentary:

;; Each test starts `autosave run' (the binary $AUTOSAVE_BINARY, by default
;; .build/debug/autosave) on a temporary project, visits a file in this Emacs,
;; types as a person would (`execute-kbd-macro'), and looks at the files, at
;; the agent (through the `autosave' command) and at the buffer.  Waits are on
;; conditions with generous timeouts, never bare sleeps.
;;
;;   emacs --batch -Q -l ert -l editors/emacs/test/autosave-test.el \
;;         -f ert-run-tests-batch-and-exit

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'checkdoc)

(defconst autosave-test--package
  (expand-file-name ".." (file-name-directory (or load-file-name buffer-file-name)))
  "The folder holding autosave.el.")
(add-to-list 'load-path autosave-test--package)
(require 'autosave)

;; A person's Emacs reads UTF-8 files as UTF-8 (a UTF-8 locale); batch Emacs under LANG=C may not.
(prefer-coding-system 'utf-8)

(defconst autosave-test--binary
  (expand-file-name (or (getenv "AUTOSAVE_BINARY") ".build/debug/autosave"))
  "The agent binary under test.")

(defconst autosave-test--timeout 20
  "Seconds a test waits for the agent, the kernel or the editor.")

(defvar autosave-test--root nil "The project folder of the running test.")
(defvar autosave-test--agent nil "The agent process of the running test.")

(defun autosave-test--wait-for (condition what &optional seconds)
  "Wait until CONDITION returns non-nil, failing after SECONDS with WHAT."
  (let ((deadline (+ (float-time) (or seconds autosave-test--timeout))) value)
    (while (and (not (setq value (funcall condition))) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (or value (ert-fail (format "timed out after %s s waiting for %s" (or seconds autosave-test--timeout) what)))))

(defun autosave-test--file (name)
  "The absolute name of NAME in the project."
  (expand-file-name name autosave-test--root))

(defun autosave-test--write (name content)
  "Write CONTENT (a unibyte string of bytes, or text as UTF-8) to NAME."
  (let ((coding-system-for-write 'no-conversion))
    (write-region (if (multibyte-string-p content) (encode-coding-string content 'utf-8) content)
                  nil (autosave-test--file name) nil 'silent)))

(defun autosave-test--read (name)
  "The bytes of NAME, decoded as UTF-8 (with its \"\\r\" kept)."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents (autosave-test--file name)))
    (buffer-string)))

(defun autosave-test--cli (&rest args)
  "Run the `autosave' command with ARGS in the project; return its output."
  (with-temp-buffer
    (let* ((default-directory (file-name-as-directory autosave-test--root))
           (coding-system-for-read 'utf-8-unix)
           (status (apply #'call-process autosave-test--binary nil t nil args)))
      (unless (eq status 0)
        (ert-fail (format "autosave %S exited %s: %s" args status (buffer-string))))
      (buffer-string))))

(defun autosave-test--start-agent (config)
  "Start `autosave run' on the project with CONFIG (JSON text); wait until ready."
  (unless (file-executable-p autosave-test--binary)
    (error "No agent binary at %s: build it (`swift build') or set AUTOSAVE_BINARY" autosave-test--binary))
  (with-temp-file (autosave-test--file "autosave.json") (insert config))
  (let ((log (generate-new-buffer " *agent log*")))
    (setq autosave-test--agent
          (make-process :name "agent" :command (list autosave-test--binary "run" autosave-test--root
                                                     "--log-format" "json")
                        :buffer nil :stderr log :noquery t))
    (autosave-test--wait-for
     (lambda () (with-current-buffer log (save-excursion (goto-char (point-min))
                                                        (search-forward "\"event\":\"ready\"" nil t))))
     "the agent's ready line")))

(defun autosave-test--stop-agent ()
  "Stop the agent cleanly (SIGTERM saves every edit first) and wait for it."
  (when (and autosave-test--agent (process-live-p autosave-test--agent))
    (signal-process autosave-test--agent 'SIGTERM)
    (autosave-test--wait-for (lambda () (not (process-live-p autosave-test--agent))) "the agent to stop" 30)))

(defmacro autosave-test--with-project (config &rest body)
  "Run BODY with a new project and an agent on it with CONFIG; clean up after."
  (declare (indent 1))
  `(let* ((home (make-temp-file "autosave-emacs-" t))
          (autosave-test--root (expand-file-name "project" home))
          (autosave-test--agent nil)
          (autosave--conflicts nil))
     (make-directory autosave-test--root)
     (unwind-protect
         (progn ,@body)
       (dolist (buffer (buffer-list))
         (when (buffer-local-value 'autosave-mode buffer)
           (with-current-buffer buffer
             (set-buffer-modified-p nil)
             (kill-buffer buffer))))
       (autosave-test--stop-agent)
       (delete-directory home t))))

(defconst autosave-test--config "{\"autosave\": {\"delayMs\": 300, \"maxDelayMs\": 2000}}"
  "The agent's configuration: saves 300 ms after the last edit.")

(defconst autosave-test--slow-config "{\"autosave\": {\"delayMs\": 60000, \"maxDelayMs\": 120000}}"
  "The agent's configuration for tests whose edits must stay unsaved.")

(defun autosave-test--visit (name)
  "Visit NAME in `autosave-mode' and wait until the agent follows it."
  (let ((buffer (find-file-noselect (autosave-test--file name))))
    (set-buffer buffer)
    (switch-to-buffer buffer)
    (autosave-mode 1)
    (autosave-test--wait-for (lambda () (with-current-buffer buffer
                                          (and autosave--revision (autosave--settled-p))))
                             (format "%s attached" name))
    buffer))

(defun autosave-test--type (keys)
  "Type KEYS (a string of the characters typed, \"\\r\" for RET, or a vector).
As a person would: each key runs its command (`self-insert-command' ...)."
  (execute-kbd-macro keys))

(defun autosave-test--settled ()
  "Wait until what was typed in the current buffer reached the agent."
  (let ((buffer (current-buffer)))
    (autosave-test--wait-for (lambda () (with-current-buffer buffer (autosave--settled-p)))
                             "the edits to reach the agent")))

(defmacro autosave-test--never-asked (&rest body)
  "Run BODY; fail if Emacs asks whether to edit a file changed on disk."
  (declare (indent 0))
  `(cl-letf (((symbol-function 'ask-user-about-supersession-threat)
              (lambda (file) (ert-fail (format "Emacs asked about %s changed on disk" file))))
             ((symbol-function 'yes-or-no-p)
              (lambda (prompt) (ert-fail (format "Emacs asked: %s" prompt))))
             ((symbol-function 'y-or-n-p)
              (lambda (prompt) (ert-fail (format "Emacs asked: %s" prompt)))))
     ,@body))

;;;; Tests

(ert-deftest autosave-typing-is-saved-without-save-buffer ()
  "What is typed reaches the file after the quiet window; the buffer shows unmodified."
  (autosave-test--with-project autosave-test--config
    (autosave-test--write "notes.txt" "one\ntwo\nthree\n")
    (autosave-test--start-agent autosave-test--config)
    (autosave-test--visit "notes.txt")
    (goto-char (point-min))
    (forward-line 1)
    (end-of-line)
    (autosave-test--never-asked
      (autosave-test--type " typed")
      (should (buffer-modified-p))
      (autosave-test--wait-for (lambda () (equal (autosave-test--read "notes.txt") "one\ntwo typed\nthree\n"))
                               "the typing in the file")
      (autosave-test--wait-for (lambda () (not (buffer-modified-p))) "the buffer to show unmodified")
      ;; Typing again into the buffer whose file the agent wrote, and saving by hand, goes through
      ;; the agent too (the sed and conflict tests show Emacs does not ask about the file).
      (autosave-test--type "!")
      (save-buffer)
      (should (equal (autosave-test--read "notes.txt") "one\ntwo typed!\nthree\n")))
    (should-not (file-exists-p (autosave-test--file ".#notes.txt")))))

(ert-deftest autosave-save-buffer-is-durable-when-it-returns ()
  "`save-buffer' saves through the agent and returns once the file is written."
  (autosave-test--with-project autosave-test--slow-config
    (autosave-test--write "notes.txt" "one\n")
    (autosave-test--start-agent autosave-test--slow-config)
    (autosave-test--visit "notes.txt")
    (goto-char (point-max))
    (autosave-test--type "two\r")
    (should (equal (autosave-test--read "notes.txt") "one\n"))
    (save-buffer)
    (should (equal (autosave-test--read "notes.txt") "one\ntwo\n"))
    (should-not (buffer-modified-p))))

(defconst autosave-test--child-script
  "(progn
     (add-to-list 'load-path (getenv \"AUTOSAVE_EL\"))
     (require 'autosave)
     (find-file (getenv \"AUTOSAVE_FILE\"))
     (autosave-mode 1)
     (while (not (and autosave--revision (autosave--settled-p))) (accept-process-output nil 0.02))
     (goto-char (point-max))
     (dotimes (i 5)
       (execute-kbd-macro (format \"typed %d\\r\" (1+ i)))
       (while (not (autosave--settled-p)) (accept-process-output nil 0.02))
       (message \"SENT %d\" (1+ i)))
     (while t (accept-process-output nil 1)))"
  "A second Emacs that types five lines, saying SENT after the agent took each.")

(ert-deftest autosave-kill-9-of-emacs-loses-nothing-sent ()
  "Emacs killed with SIGKILL after typing: every edit it sent reaches the file."
  (autosave-test--with-project autosave-test--slow-config
    (autosave-test--write "notes.txt" "first\n")
    (autosave-test--start-agent "{\"autosave\": {\"delayMs\": 3000, \"maxDelayMs\": 6000}}")
    (let* ((output (generate-new-buffer " *child emacs*"))
           (process-environment (append (list (concat "AUTOSAVE_EL=" autosave-test--package)
                                              (concat "AUTOSAVE_FILE=" (autosave-test--file "notes.txt")))
                                        process-environment))
           (child (make-process :name "child emacs" :buffer output :noquery t
                                :command (list (expand-file-name invocation-name invocation-directory)
                                               "--batch" "-Q" "--eval" autosave-test--child-script))))
      (autosave-test--wait-for (lambda () (with-current-buffer output
                                            (save-excursion (goto-char (point-min)) (search-forward "SENT 5" nil t))))
                               "the child Emacs to send five lines")
      (signal-process child 'SIGKILL)
      (autosave-test--wait-for (lambda () (not (process-live-p child))) "the child Emacs to die")
      (should (eq (process-status child) 'signal))
      (should (= (process-exit-status child) 9))
      (let ((expected "first\ntyped 1\ntyped 2\ntyped 3\ntyped 4\ntyped 5\n"))
        ;; The agent holds every line the dead Emacs sent, and saves them after its window.
        (should (equal (autosave-test--cli "cat" "notes.txt") expected))
        (autosave-test--wait-for (lambda () (equal (autosave-test--read "notes.txt") expected))
                                 "the sent lines in the file")))))

(ert-deftest autosave-sed-on-other-lines-is-merged-keeping-point-and-undo ()
  "`sed -i' under unsaved typing: merged in, point and mark kept, one undo step of its own."
  (autosave-test--with-project autosave-test--slow-config
    (autosave-test--write "code.txt" (mapconcat (lambda (i) (format "line %d\n" i)) (number-sequence 1 10) ""))
    (autosave-test--start-agent autosave-test--slow-config)
    (autosave-test--visit "code.txt")
    (autosave-test--never-asked
      (goto-char (point-min))
      (forward-line 1)
      (end-of-line)
      (autosave-test--type " typed")
      (autosave-test--settled)
      (let ((point (point)) (mark (save-excursion (goto-char (point-min)) (forward-line 8) (point-marker))))
        (should (buffer-modified-p))
        (should (eq 0 (call-process "sed" nil nil nil "-i" "s/^line 8$/line eight/" (autosave-test--file "code.txt"))))
        (autosave-test--wait-for (lambda () (save-excursion (goto-char (point-min)) (search-forward "line eight" nil t)))
                                 "sed's change in the buffer")
        (should (= (point) point))
        (should (equal (buffer-substring (line-beginning-position) (point)) "line 2 typed"))
        (should (equal (save-excursion (goto-char mark) (thing-at-point 'line t)) "line 9\n"))
        (should (string-match-p "line 2 typed\n\\(.*\n\\)*line eight\n" (buffer-string)))
        ;; One undo takes back sed's change, and only it; that reaches the agent like typing.
        (autosave-test--type (kbd "C-_"))
        (should (equal (buffer-string) (concat "line 1\nline 2 typed\n"
                                               (mapconcat (lambda (i) (format "line %d\n" i)) (number-sequence 3 10) ""))))
        (should (= (point) point))
        (autosave-test--settled)
        (should (equal (autosave-test--cli "cat" "code.txt") (buffer-string)))
        ;; Saving by hand the buffer whose file sed changed: Emacs does not ask.
        (save-buffer)
        (should (equal (autosave-test--read "code.txt") (buffer-string)))))))

(ert-deftest autosave-a-persons-and-a-coding-agents-edits-on-one-file ()
  "Typing in Emacs and a patch through the CLI on one file: both kept, in the buffer too."
  (autosave-test--with-project autosave-test--config
    (autosave-test--write "app.py" "def greet(name):\n    return \"hello \" + name\n\n\ndef main():\n    print(greet(\"world\"))\n")
    (autosave-test--start-agent autosave-test--config)
    (autosave-test--visit "app.py")
    (autosave-test--never-asked
      (goto-char (point-min))
      (end-of-line)
      (autosave-test--type "  # typed")
      (autosave-test--settled)
      (let ((point (point))
            (patch (concat "--- a/app.py\n+++ b/app.py\n@@ -4,3 +4,3 @@\n \n-def main():\n+def main():  # entry point\n"
                           "     print(greet(\"world\"))\n")))
        (with-temp-buffer
          (insert patch)
          (let ((default-directory (file-name-as-directory autosave-test--root)))
            (should (eq 0 (call-process-region (point-min) (point-max) autosave-test--binary nil nil nil "patch")))))
        (autosave-test--wait-for (lambda () (save-excursion (goto-char (point-min)) (search-forward "# entry point" nil t)))
                                 "the coding agent's patch in the buffer")
        (should (= (point) point))
        (autosave-test--type " too")
        (let ((expected "def greet(name):  # typed too\n    return \"hello \" + name\n\n\ndef main():  # entry point\n    print(greet(\"world\"))\n"))
          (should (equal (buffer-string) expected))
          (autosave-test--wait-for (lambda () (equal (autosave-test--read "app.py") expected)) "both edits in the file")
          (autosave-test--wait-for (lambda () (not (buffer-modified-p))) "the buffer to show unmodified"))
        ;; History names both writers, and `autosave-history' lists them.
        (let ((source (current-buffer)))
          (autosave-test--wait-for
           (lambda ()
             (with-current-buffer source (autosave-history))
             (with-current-buffer (format "*autosave history %s*" "app.py")
               (let ((text (buffer-string)))
                 (and (string-match-p (regexp-quote autosave-client) text) (string-match-p "\\bcli\\b" text)))))
           "history naming emacs and cli"))))))

(ert-deftest autosave-overlapping-edits-keep-the-buffer-and-list-the-copy ()
  "The disk and unsaved typing change the same line: the text stays, the disk's goes to a copy."
  (autosave-test--with-project autosave-test--slow-config
    (autosave-test--write "notes.txt" "alpha\nbeta\ngamma\n")
    (autosave-test--start-agent autosave-test--slow-config)
    (autosave-test--visit "notes.txt")
    (autosave-test--never-asked
      (goto-char (point-min))
      (forward-line 1)
      (end-of-line)
      (autosave-test--type "-mine")
      (autosave-test--settled)
      (should (eq 0 (call-process "sed" nil nil nil "-i" "s/^beta$/beta-disk/" (autosave-test--file "notes.txt"))))
      (autosave-test--wait-for (lambda () autosave--conflicts) "the conflict")
      (should (equal (buffer-string) "alpha\nbeta-mine\ngamma\n"))
      (let ((copy (plist-get (car autosave--conflicts) :copy)))
        (should (equal (autosave-test--read (file-relative-name copy autosave-test--root)) "alpha\nbeta-disk\ngamma\n"))
        (autosave-conflicts)
        (with-current-buffer "*autosave-conflicts*"
          (should (string-match-p (regexp-quote copy) (buffer-string)))))
      (save-buffer)
      (should (equal (autosave-test--read "notes.txt") "alpha\nbeta-mine\ngamma\n")))))

(ert-deftest autosave-multibyte-text-and-crlf-round-trip-byte-for-byte ()
  "Multibyte characters and CRLF line breaks: positions in characters, bytes kept."
  (autosave-test--with-project autosave-test--config
    (autosave-test--write "dos.txt" "héllo wörld\r\nemoji 😀 here\r\nlast\r\n")
    (autosave-test--start-agent autosave-test--config)
    (autosave-test--visit "dos.txt")
    (should (eq (coding-system-eol-type buffer-file-coding-system) 1))
    (goto-char (point-min))
    (search-forward "😀")
    (autosave-test--type (vector ?✓))
    (end-of-line)
    (autosave-test--type (vector 'return ?n ?é ?w))
    (goto-char (point-min))
    (search-forward "wö")
    (autosave-test--type (vector ?ß))
    (let ((expected "héllo wößrld\r\nemoji 😀✓ here\r\nnéw\r\nlast\r\n"))
      (autosave-test--wait-for (lambda () (equal (autosave-test--read "dos.txt") expected)) "the typing in the CRLF file")
      (autosave-test--wait-for (lambda () (not (buffer-modified-p))) "the buffer to show unmodified")
      ;; A tool's change of the CRLF file arrives in the buffer, which stays CRLF.
      (should (eq 0 (call-process "sed" nil nil nil "-i" "s/^last/LAST ✓/" (autosave-test--file "dos.txt"))))
      (autosave-test--wait-for (lambda () (save-excursion (goto-char (point-min)) (search-forward "LAST ✓" nil t)))
                               "sed's change in the buffer")
      (should (equal (buffer-string) "héllo wößrld\nemoji 😀✓ here\nnéw\nLAST ✓\n"))
      (goto-char (point-max))
      (autosave-test--type "end")
      ;; What Emacs's own save writes: text mode's `require-final-newline' adds the line break.
      (save-buffer)
      (should (equal (autosave-test--read "dos.txt") "héllo wößrld\r\nemoji 😀✓ here\r\nnéw\r\nLAST ✓\r\nend\r\n"))
      (should (eq (coding-system-eol-type buffer-file-coding-system) 1)))))

(ert-deftest autosave-two-buffers-on-one-file-follow-each-other ()
  "Two buffers visiting one file: what is typed in either shows in both and the file."
  (autosave-test--with-project autosave-test--config
    (autosave-test--write "notes.txt" "one\ntwo\nthree\n")
    (autosave-test--start-agent autosave-test--config)
    (let* ((first (autosave-test--visit "notes.txt"))
           (second (generate-new-buffer "notes.txt (second)")))
      (with-current-buffer second
        (insert-file-contents (autosave-test--file "notes.txt") t)
        (autosave-mode 1)
        (autosave-test--wait-for (lambda () (with-current-buffer second (and autosave--revision (autosave--settled-p))))
                                 "the second buffer attached"))
      (with-current-buffer first
        (goto-char (point-min))
        (end-of-line)
        (autosave-test--type " A"))
      (autosave-test--wait-for (lambda () (with-current-buffer second (equal (buffer-string) "one A\ntwo\nthree\n")))
                               "the first buffer's typing in the second")
      (set-buffer second)
      (switch-to-buffer second)
      (goto-char (point-max))
      (autosave-test--type "four\r")
      (let ((expected "one A\ntwo\nthree\nfour\n"))
        (autosave-test--wait-for (lambda () (with-current-buffer first (equal (buffer-string) expected)))
                                 "the second buffer's typing in the first")
        (autosave-test--wait-for (lambda () (equal (autosave-test--read "notes.txt") expected)) "both in the file")
        (autosave-test--wait-for (lambda () (not (or (buffer-modified-p first) (buffer-modified-p second))))
                                 "both buffers to show unmodified")))))

(ert-deftest autosave-package-byte-compiles-without-warnings-and-is-checkdoc-clean ()
  "Every file of the package byte-compiles with warnings as errors, and checkdoc finds nothing."
  (let ((out (make-temp-file "autosave-elc-" t)) (complaints nil))
    (unwind-protect
        (dolist (file (directory-files autosave-test--package t "\\`autosave.*\\.el\\'"))
          (let ((byte-compile-error-on-warn t)
                (byte-compile-dest-file-function
                 (lambda (source) (expand-file-name (concat (file-name-nondirectory source) "c") out))))
            (should (byte-compile-file file)))
          ;; `checkdoc-file' prints its findings; its notes buffer keeps them to be read.
          (with-current-buffer (find-file-noselect file)
            (let ((checkdoc-diagnostic-buffer "*autosave checkdoc*"))
              (checkdoc-current-buffer t))
            (kill-buffer))
          (with-current-buffer "*autosave checkdoc*"
            (goto-char (point-min))
            (while (re-search-forward "^autosave.*:[0-9]+: .*$" nil t)
              (push (match-string 0) complaints))
            (kill-buffer)))
      (delete-directory out t))
    (should (equal complaints nil))))

(provide 'autosave-test)
;;; autosave-test.el ends here
