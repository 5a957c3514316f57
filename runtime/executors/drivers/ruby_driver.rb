# oishell ruby executor driver: one persistent top-level binding, blocks read from the control channel.
#
# Started by the supervisor as `ruby ruby_driver.rb` with the control socket at fd 3 (docs/protocol.md, "Executor
# control channel"). The socket is moved to a high close-on-exec fd and fd 3 is closed, so the programs a block
# starts never see it; stdout and stderr are the block's own, so nothing a block prints can end it.
#
# Each block is evaluated in TOPLEVEL_BINDING, so local variables, methods, classes and `require`s persist as in
# irb. The driver keeps everything in this module and defines no top-level local, so a block sees only its own.
# The value of the last expression is printed with `inspect` (as irb does) unless it is nil or the block ends with
# an assignment or a definition. SIGINT raises Interrupt only while a block runs; after it, every other process of
# our process group (what the block left running) is killed. Active lines are sampled: a :line TracePoint that
# reports the next line of the block's own file and disables itself, re-enabled every LINE_INTERVAL by a thread while
# the block runs (a TracePoint left on slows a tight loop about fivefold).
require "fcntl"

module OishellDriver
  LINE_INTERVAL = 0.02 # seconds between two samples of the active line
  QUIET_LAST = %i[assign opassign massign def defs class module sclass].freeze
  # Calls whose value is what they printed (`p x` returns x) or says nothing (`require` is true).
  QUIET_CALLS = %w[p pp puts print printf require require_relative load].freeze
  F_DUPFD_CLOEXEC = Fcntl.const_defined?(:F_DUPFD_CLOEXEC) ? Fcntl::F_DUPFD_CLOEXEC : 1030 # Linux's value

  @state = { seq: "", line: 0, in_user: false }
  @send_lock = Mutex.new

  class << self
    attr_reader :state

    def open_control
      fd = IO.for_fd(3, autoclose: false).fcntl(F_DUPFD_CLOEXEC, 100)
      IO.for_fd(3).close
      io = IO.for_fd(fd, "r+b")
      io.sync = true
      io
    end

    def send_line(line)
      @send_lock.synchronize { @ctl.write(line) }
    end

    def on_line(number)
      return if number == @state[:line]

      @state[:line] = number
      send_line("L #{@state[:seq]} #{number}\n")
    end

    # Samples the block's active line until it ends (see the top of this file).
    def line_sampler(file)
      tracer = TracePoint.new(:line) do |tp|
        next unless tp.path == file

        tp.disable
        on_line(tp.lineno)
      end
      tracer.enable # the block's first line
      thread = Thread.new do
        loop do
          sleep LINE_INTERVAL
          tracer.enable unless tracer.enabled?
        end
      end
      [tracer, thread]
    end

    # Whether the block's value is worth printing: not after an assignment, a definition or a printing call.
    def show_value?(source)
      require "ripper"
      tree = Ripper.sexp(source)
      return true unless tree.is_a?(Array) && tree[1].is_a?(Array)

      last = tree[1].reverse.find { |node| node.is_a?(Array) && node.first != :void_stmt }
      return true unless last
      return false if QUIET_LAST.include?(last.first)

      !QUIET_CALLS.include?(called_name(last))
    rescue StandardError
      true
    end

    # The name of a receiver-less call (`p x`, `p(x)`), else nil.
    def called_name(node)
      callee = case node.first
               when :command then node[1]
               when :method_add_arg then node[1].is_a?(Array) && node[1].first == :fcall ? node[1][1] : nil
               when :vcall, :fcall then node[1]
               end
      callee.is_a?(Array) && callee.first == :@ident ? callee[1] : nil
    end

    def print_exception(error)
      trace = (error.backtrace || []).reject { |frame| frame.include?(__FILE__) }
      # A syntax error has only the driver's frames; its message names the block's line.
      return $stderr.write("#{error.message} (#{error.class})\n") if trace.empty?

      error.set_backtrace(trace)
      $stderr.write(error.full_message(highlight: false, order: :top))
    rescue StandardError
      $stderr.write("#{error.class}: #{error.message}\n")
    end

    # After an interrupt: the block's background processes share our process group; end them, keep ourselves.
    def kill_block_processes
      me = Process.pid
      group = Process.getpgrp
      Dir.children("/proc").each do |name|
        next unless name.match?(/\A\d+\z/) && name.to_i != me

        begin
          fields = File.binread("/proc/#{name}/stat").rpartition(")").last.split
          Process.kill(:KILL, name.to_i) if fields[2].to_i == group
        rescue SystemCallError
          nil
        end
      end
    rescue SystemCallError
      nil
    end

    # The block's stdin: EOF, or exactly `data` then EOF. Returns a copy of the old fd 0, to restore.
    def set_stdin(data)
      saved = $stdin.dup
      reader, writer = IO.pipe
      if data
        Thread.new do
          writer.write(data)
        rescue StandardError
          nil
        ensure
          writer.close
        end
      else
        writer.close
      end
      $stdin.reopen(reader)
      reader.close
      saved
    end

    def evaluate(seq, source)
      file = "<block #{seq}>"
      @state.update(seq: seq, line: 0)
      begin
        tracer, sampler = line_sampler(file)
        @state[:in_user] = true
        value = begin
          TOPLEVEL_BINDING.eval(source, file, 1)
        ensure
          @state[:in_user] = false
          sampler.kill.join # before the last disable: it would enable the tracer again
          tracer.disable
        end
        $stdout.write("#{value.inspect}\n") unless value.nil? || !show_value?(source)
        ["ok", 0]
      rescue Interrupt => e
        print_exception(e)
        kill_block_processes
        ["interrupted", 130]
      rescue SystemExit => e
        e.success? ? ["ok", 0] : ["error", e.status.clamp(-2**31, 2**31 - 1)]
      rescue Exception => e # rubocop:disable Lint/RescueException -- the block's error, whatever it is, is shown
        print_exception(e)
        ["error", 1]
      ensure
        @state[:in_user] = false
      end
    end

    def run_block(seq, source, stdin_data)
      saved = set_stdin(stdin_data)
      evaluate(seq, source)
    ensure
      [$stdout, $stderr].each do |stream|
        stream.flush
      rescue StandardError
        nil
      end
      if saved
        $stdin.reopen(saved)
        saved.close
      end
    end

    def read_exact(count)
      data = @ctl.read(count)
      exit!(0) if data.nil? || data.bytesize < count # the supervisor closed the channel
      data
    end

    def main
      @ctl = open_control
      # As python does in the C locale (PEP 538): text is UTF-8, not US-ASCII with every other character escaped.
      Encoding.default_external = Encoding::UTF_8 if Encoding.default_external == Encoding::US_ASCII
      $stdout.sync = true
      $stderr.sync = true
      trap("INT") { raise Interrupt if @state[:in_user] }
      send_line("R\n")
      loop do
        # Request: "X <seq> <code bytes> <stdin bytes or -1>\n", the code, NUL, and (when given) stdin data, NUL.
        header = begin
          @ctl.gets
        rescue Interrupt
          next
        end
        exit!(0) if header.nil?
        parts = header.split
        unless parts.length == 4 && parts[0] == "X"
          $stderr.write("oishell ruby driver: bad request #{header[0, 80].inspect}\n")
          next
        end
        seq = parts[1]
        code_len = Integer(parts[2], 10)
        stdin_len = Integer(parts[3], 10)
        source = read_exact(code_len + 1)[0, code_len].force_encoding(Encoding::UTF_8)
        stdin_data = stdin_len >= 0 ? read_exact(stdin_len + 1)[0, stdin_len] : nil
        status, code = run_block(seq, source, stdin_data)
        send_line("D #{seq} #{status} #{code}\n")
      end
    end
  end
end

OishellDriver.main
