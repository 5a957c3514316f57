// oishell java executor driver: one persistent JShell, blocks read from the control channel.
//
// Started by the supervisor as `java [flags] java_driver.java` (java's source launcher compiles this file at start)
// with the control channel as two pipes (docs/protocol.md, "Executor control channel"): requests at fd 3, reports
// at fd 4, opened by path (/proc/self/fd/N; a socket would refuse that). The JVM starts programs with every fd
// above 2 closed, so what a block starts never sees them. stdout and stderr are the block's own.
//
// Why not the `jshell` tool: it runs snippets in a second JVM that it reaches over JDI on a loopback TCP socket,
// which the sandbox does not let it bind, and its prompt and feedback would have to be parsed out of the output.
// Here the jdk.jshell API runs snippets in this JVM ("local" execution engine): variables, methods, classes and
// imports persist between blocks; a block is split into snippets with SourceCodeAnalysis and evaluated one by one
// (each one's first line is the active line); the first compile error or exception ends the block (printed with
// the block's line numbers); the value of a last expression is printed as jshell shows it. A block that only
// declares classes, one of them with `static void main(String[])` (how Java is written outside jshell), runs that
// main. SIGINT stops the running snippet (JShell.stop), the session stays; the processes the block started are
// killed. System.exit ends the JVM: the executor restarts, as after python's os._exit.
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import jdk.jshell.Diag;
import jdk.jshell.EvalException;
import jdk.jshell.JShell;
import jdk.jshell.JShellException;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import jdk.jshell.TypeDeclSnippet;
import jdk.jshell.UnresolvedReferenceException;

public class OishellJavaDriver {
  private static final Pattern MAIN =
      Pattern.compile("\\bstatic\\s+(public\\s+)?void\\s+main\\s*\\(\\s*(final\\s+)?String\\s*(\\[\\s*]|\\.\\.\\.)");

  private static InputStream requests;
  private static OutputStream reports;
  private static JShell shell;
  private static volatile boolean running;
  private static volatile boolean interrupted;
  private static volatile long generation;  // counts blocks: a late stop must not reach the next block
  // Where each snippet came from, for stack traces: snippet id -> {block seq, line of its first line}.
  private static final Map<String, long[]> origins = new HashMap<>();
  private static Snippet lastSnippet;  // the snippet `evaluate` evaluated last

  private static synchronized void send(String line) {
    try {
      reports.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      reports.flush();
    } catch (IOException e) {
      Runtime.getRuntime().halt(0);  // the supervisor is gone
    }
  }

  private static byte[] readExact(int n) throws IOException {
    byte[] data = requests.readNBytes(n);
    if (data.length < n) Runtime.getRuntime().halt(0);  // the supervisor closed the channel
    return data;
  }

  private static String readHeader() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (;;) {
      int c = requests.read();
      if (c < 0) Runtime.getRuntime().halt(0);
      if (c == '\n') return line.toString(StandardCharsets.US_ASCII);
      line.write(c);
    }
  }

  private static int lineAt(String code, int offset) {
    int line = 1;
    for (int i = 0; i < offset && i < code.length(); ++i) {
      if (code.charAt(i) == '\n') ++line;
    }
    return line;
  }

  private static String location(String snippetId, int lineInSnippet) {
    long[] origin = origins.get(snippetId);
    if (origin == null) return "#" + snippetId + ":" + lineInSnippet;
    return "<block " + origin[0] + ">:" + (origin[1] + lineInSnippet - 1);
  }

  private static void printException(Throwable error) {
    StringBuilder out = new StringBuilder();
    String prefix = "";
    for (Throwable t = error; t != null; t = t.getCause(), prefix = "Caused by: ") {
      String name = t instanceof EvalException ? ((EvalException) t).getExceptionClassName() : t.getClass().getName();
      if (t instanceof UnresolvedReferenceException) {
        Snippet s = ((UnresolvedReferenceException) t).getSnippet();
        out.append(prefix).append("error: ").append(s.source().strip()).append(" cannot be used until ")
            .append(String.join(", ", shell.unresolvedDependencies((jdk.jshell.DeclarationSnippet) s).toList()))
            .append(" is declared\n");
        continue;
      }
      String message = t.getMessage();
      out.append(prefix).append(name).append(message == null ? "" : ": " + message).append('\n');
      for (StackTraceElement frame : t.getStackTrace()) {
        String cls = frame.getClassName();
        if (cls.startsWith("jdk.jshell.") || cls.startsWith("jdk.internal.reflect.")
            || cls.startsWith("java.lang.reflect.") || cls.equals(OishellJavaDriver.class.getName())) {
          break;  // the driver's and JShell's own frames: below the block's
        }
        String file = frame.getFileName();
        if (file == null || !file.startsWith("#")) {
          out.append("\tat ").append(frame).append('\n');
          continue;
        }
        String where = location(file.substring(1), frame.getLineNumber());  // a snippet's frame
        String method = frame.getMethodName();
        out.append("\tat ").append(method.startsWith("do_it$") ? where : method + "(" + where + ")").append('\n');
      }
    }
    System.err.print(out);
  }

  private static void printDiagnostics(Snippet snippet, long seq, int firstLine) {
    StringBuilder out = new StringBuilder();
    String source = snippet.source();
    for (Diag d : shell.diagnostics(snippet).toList()) {
      if (!d.isError()) continue;
      int pos = (int) Math.max(0, Math.min(d.getPosition(), source.length()));
      int lineStart = source.lastIndexOf('\n', pos - 1) + 1;
      int lineEnd = source.indexOf('\n', pos);
      if (lineEnd < 0) lineEnd = source.length();
      out.append("<block ").append(seq).append(">:").append(firstLine + lineAt(source, pos) - 1).append(": error: ")
          .append(d.getMessage(null)).append('\n').append(source, lineStart, lineEnd).append('\n')
          .append(" ".repeat(pos - lineStart)).append("^\n");
    }
    if (out.length() == 0) out.append("<block ").append(seq).append(">:").append(firstLine).append(": error: ")
        .append(snippet.source().strip()).append(" was rejected\n");
    System.err.print(out);
  }

  private static boolean shownValue(Snippet s) {
    return s.subKind() == Snippet.SubKind.TEMP_VAR_EXPRESSION_SUBKIND
        || s.subKind() == Snippet.SubKind.VAR_VALUE_SUBKIND;
  }

  // Evaluates one snippet; null when it went well, else the block's {status, code}.
  private static String[] evaluate(String source, long seq, int firstLine, StringBuilder value) {
    lastSnippet = null;
    List<SnippetEvent> events = shell.eval(source);
    if (interrupted) return null;
    for (SnippetEvent e : events) {
      if (e.causeSnippet() != null) continue;  // a dependent snippet's update, not this one
      origins.put(e.snippet().id(), new long[] {seq, firstLine});
      lastSnippet = e.snippet();
      if (e.status() == Snippet.Status.REJECTED) {
        printDiagnostics(e.snippet(), seq, firstLine);
        return new String[] {"error", "1"};
      }
      JShellException error = e.exception();
      if (error != null) {
        printException(error);
        return new String[] {"error", "1"};
      }
      value.setLength(0);
      if (shownValue(e.snippet()) && e.value() != null) value.append(e.value());
    }
    return null;
  }

  private static String[] runBlock(long seq, String code) {
    SourceCodeAnalysis analysis = shell.sourceCodeAnalysis();
    String remaining = code;
    StringBuilder value = new StringBuilder();
    String mainClass = null;
    boolean onlyTypes = true;
    int offset = 0;
    interrupted = false;
    ++generation;
    running = true;
    try {
      while (!remaining.isBlank()) {
        SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(remaining);
        if (info.completeness() == SourceCodeAnalysis.Completeness.EMPTY) break;
        String source = info.completeness().isComplete() ? info.source() : remaining;  // else for its error
        String rest = info.completeness().isComplete() ? info.remaining() : "";
        int lead = 0;
        while (lead < remaining.length() && Character.isWhitespace(remaining.charAt(lead))) ++lead;
        int firstLine = lineAt(code, offset + lead);
        offset += remaining.length() - rest.length();
        remaining = rest;
        send("L " + seq + " " + firstLine);
        String[] failed = evaluate(source, seq, firstLine, value);
        if (interrupted) break;
        if (failed != null) return failed;
        Snippet last = lastSnippet;
        if (last instanceof TypeDeclSnippet && MAIN.matcher(last.source()).find()) {
          if (mainClass == null) mainClass = ((TypeDeclSnippet) last).name();
        } else if (last == null || last.kind() != Snippet.Kind.IMPORT) {
          onlyTypes = false;
        }
      }
      if (!interrupted && onlyTypes && mainClass != null) {
        value.setLength(0);
        String[] failed = evaluate(mainClass + ".main(new String[0]);", seq, 1, value);
        if (failed != null && !interrupted) return failed;
      }
    } finally {
      running = false;
    }
    if (interrupted) {
      System.out.flush();
      System.err.println("Interrupted");
      ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
      return new String[] {"interrupted", "130"};
    }
    if (value.length() > 0) System.out.println(value);
    return new String[] {"ok", "0"};
  }

  public static void main(String[] args) throws IOException {
    requests = new BufferedInputStream(new FileInputStream("/proc/self/fd/3"));
    reports = new FileOutputStream("/proc/self/fd/4");
    shell = JShell.builder().executionEngine("local").in(InputStream.nullInputStream()).out(System.out)
        .err(System.err).build();
    shell.eval("0;");  // compiles JShell's own machinery now, not in the first block's time
    // JShell.stop only stops user code that runs at the moment: a SIGINT while a snippet compiles would be lost.
    // So it is repeated until the block has ended (the block checks `interrupted` between snippets).
    sun.misc.Signal.handle(new sun.misc.Signal("INT"), signal -> {
      if (!running || interrupted) return;
      interrupted = true;
      final long block = generation;
      Thread stopper = new Thread(() -> {
        while (running && generation == block) {
          shell.stop();
          try {
            Thread.sleep(20);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "oishell-interrupt");
      stopper.setDaemon(true);
      stopper.start();
    });
    send("R");
    for (;;) {
      // Request: "X <seq> <code bytes> <stdin bytes or -1>\n", the code, NUL, and (when given) stdin data, NUL.
      // The stdin data is ignored: a java block's stdin is at EOF (the supervisor refuses stdin for java).
      String[] parts = readHeader().split(" ");
      if (parts.length != 4 || !parts[0].equals("X")) {
        System.err.println("oishell java driver: bad request");
        continue;
      }
      long seq = Long.parseLong(parts[1]);
      int codeLength = Integer.parseInt(parts[2]);
      int stdinLength = Integer.parseInt(parts[3]);
      String code = new String(readExact(codeLength + 1), 0, codeLength, StandardCharsets.UTF_8);
      if (stdinLength >= 0) readExact(stdinLength + 1);
      String[] result;
      try {
        result = runBlock(seq, code);
      } catch (RuntimeException e) {  // a fault of this driver: the block fails, the session goes on
        System.err.println("oishell java driver: " + e);
        result = new String[] {"error", "1"};
      }
      System.out.flush();
      System.err.flush();
      send("D " + seq + " " + result[0] + " " + result[1]);
    }
  }
}
