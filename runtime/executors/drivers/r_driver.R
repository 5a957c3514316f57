# oishell R executor driver: one persistent global environment, blocks read from the control channel.
#
# Started by the supervisor as `Rscript --vanilla r_driver.R` with the control channel as two pipes (docs/protocol.md,
# "Executor control channel"): requests at fd 3, reports at fd 4. R opens them by path (/proc/self/fd/N), which a
# socket would refuse. R cannot close an fd it did not open, so fds 3 and 4 stay open in R, and programs a block
# starts inherit them (they are pipes to the supervisor, which parses every line strictly; docs/protocol.md).
# stdout and stderr are the block's own, so nothing a block prints can end it.
#
# Each block is parsed whole, then its top-level expressions are evaluated one by one in the global environment,
# each visible value printed, as R's own REPL does. The first error ends the block (printed as R prints it); a
# warning is printed when it happens. SIGINT (R's interrupt condition) stops the block and keeps the session; after
# it, every other process of our process group (what the block left running) is killed.
local({
  # As python does in the C locale (PEP 538): characters print as themselves, not as <U+00E9>.
  if (!isTRUE(l10n_info()[["UTF-8"]])) invisible(suppressWarnings(Sys.setlocale("LC_CTYPE", "C.UTF-8")))
  ctl_in <- file("/proc/self/fd/3", open = "rb", raw = TRUE)
  ctl_out <- file("/proc/self/fd/4", open = "wb", raw = TRUE)

  send <- function(line) {
    writeBin(charToRaw(paste0(line, "\n")), ctl_out)
    flush(ctl_out)
  }

  # Exactly n bytes, or the end of the session when the supervisor closed the channel.
  read_exact <- function(n) {
    data <- raw(0)
    while (length(data) < n) {
      chunk <- tryCatch(readBin(ctl_in, "raw", n - length(data)), interrupt = function(i) NULL)
      if (is.null(chunk)) next
      if (length(chunk) == 0) quit(save = "no", status = 0)
      data <- c(data, chunk)
    }
    data
  }

  read_header <- function() {
    bytes <- raw(0)
    repeat {
      byte <- read_exact(1)
      if (byte == as.raw(10)) break
      bytes <- c(bytes, byte)
    }
    rawToChar(bytes)
  }

  # After an interrupt: the block's background processes share our process group; end them, keep ourselves.
  kill_block_processes <- function() {
    me <- Sys.getpid()
    stat_fields <- function(pid) {
      text <- tryCatch(readLines(sprintf("/proc/%s/stat", pid), warn = FALSE)[1], error = function(e) NA)
      if (is.na(text)) return(NULL)
      strsplit(sub("^.*\\) ", "", text), " ", fixed = TRUE)[[1]]
    }
    group <- stat_fields(me)[3]
    for (pid in suppressWarnings(as.integer(list.files("/proc")))) {
      if (is.na(pid) || pid == me) next
      fields <- stat_fields(pid)
      if (!is.null(fields) && identical(fields[3], group)) tools::pskill(pid, tools::SIGKILL)
    }
  }

  # As R prints them: "Error in f() : boom", "Error: boom" when the block itself signalled it; "Warning message:",
  # then "In f() : ..." or the message alone.
  top_call <- quote(eval(exprs[[i]], envir = globalenv()))
  call_text <- function(c) {
    call <- conditionCall(c)
    if (is.null(call) || identical(call, top_call)) return(NULL)
    paste(deparse(call, nlines = 1), collapse = "")
  }
  error_text <- function(e) {
    call <- call_text(e)
    if (is.null(call)) sprintf("Error: %s\n", conditionMessage(e)) else sprintf("Error in %s : %s\n", call, conditionMessage(e))
  }
  warning_text <- function(w) {
    call <- call_text(w)
    if (is.null(call)) sprintf("Warning message:\n%s\n", conditionMessage(w))
    else sprintf("Warning message:\nIn %s : %s\n", call, conditionMessage(w))
  }

  run_block <- function(seq, source) {
    file <- sprintf("<block %s>", seq)
    exprs <- tryCatch(parse(text = source, keep.source = TRUE, srcfile = srcfilecopy(file, source)),
                      error = function(e) e)
    if (inherits(exprs, "error")) {
      cat(sprintf("Error: %s\n", conditionMessage(exprs)), file = stderr())
      return(c("error", "1"))
    }
    refs <- attr(exprs, "srcref")
    result <- c("ok", "0")
    for (i in seq_along(exprs)) {
      if (!is.null(refs[[i]])) send(sprintf("L %s %d", seq, refs[[i]][1]))
      outcome <- tryCatch(
        withCallingHandlers({
          shown <- withVisible(eval(exprs[[i]], envir = globalenv()))
          if (shown$visible) print(shown$value)
          NULL
        }, warning = function(w) {
          cat(warning_text(w), file = stderr())
          invokeRestart("muffleWarning")
        }),
        error = function(e) {
          cat(error_text(e), file = stderr())
          c("error", "1")
        },
        interrupt = function(i) {
          cat("Interrupted\n", file = stderr())
          kill_block_processes()
          c("interrupted", "130")
        })
      if (!is.null(outcome)) {
        result <- outcome
        break
      }
    }
    result
  }

  send("R")
  repeat {
    # Request: "X <seq> <code bytes> <stdin bytes or -1>\n", the code, NUL, and (when given) stdin data, NUL. The
    # stdin data is ignored: an R block's stdin is at EOF (the supervisor refuses stdin for R).
    parts <- strsplit(read_header(), " ", fixed = TRUE)[[1]]
    if (length(parts) != 4 || parts[1] != "X") {
      cat("oishell R driver: bad request\n", file = stderr())
      next
    }
    seq <- parts[2]
    code_len <- as.numeric(parts[3])
    stdin_len <- as.numeric(parts[4])
    code <- read_exact(code_len + 1)
    if (stdin_len >= 0) read_exact(stdin_len + 1)
    source <- if (code_len > 0) rawToChar(code[seq_len(code_len)]) else ""
    Encoding(source) <- "UTF-8"
    result <- tryCatch(run_block(seq, source), interrupt = function(i) c("interrupted", "130"))
    suspendInterrupts({  # a SIGINT that comes as the block ends must not lose its D
      flush(stdout())
      flush(stderr())
      send(sprintf("D %s %s %s", seq, result[1], result[2]))
    })
  }
})
