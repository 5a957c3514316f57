"""Sandbox for asyncio programs: the same sandbox, its calls awaited (each blocking call runs on a worker thread,
output arrives through the event loop).

    async with AsyncSandbox(profile="offline") as sb:
        result = await sb.run("python", "print(6 * 7)")
        async for event in sb.stream("shell", "ls"):
            print(event)
"""
import asyncio

from .sandbox import Sandbox

_END = object()


class AsyncSandbox:
    def __init__(self, **options):
        self._options = options
        self._sandbox = None

    async def __aenter__(self):
        await self.open()
        return self

    async def __aexit__(self, *exc):
        await self.close()

    async def open(self):
        """Brings the sandbox up (the constructor of Sandbox, on a worker thread)."""
        if self._sandbox is None:
            self._sandbox = await asyncio.to_thread(Sandbox, **self._options)
        return self

    @property
    def sandbox(self):
        """The Sandbox underneath (policy, languages, events, ...)."""
        return self._sandbox

    @property
    def policy(self):
        return self._sandbox.policy

    @property
    def languages(self):
        return self._sandbox.languages

    async def run(self, language, code, stdin=None, on_output=None):
        block = self._sandbox.start(language, code, stdin, on_output)
        try:
            return await asyncio.to_thread(block.wait)
        except asyncio.CancelledError:
            block.interrupt()
            raise

    async def stream(self, language, code, stdin=None):
        """The block's events as they come; leaving the loop early interrupts the block."""
        loop = asyncio.get_running_loop()
        events = asyncio.Queue()
        block = self._sandbox.start(language, code, stdin)

        def pump():
            try:
                for event in block:
                    loop.call_soon_threadsafe(events.put_nowait, event)
                loop.call_soon_threadsafe(events.put_nowait, _END)
            except BaseException as e:  # ChildDied: raised in the consumer
                loop.call_soon_threadsafe(events.put_nowait, e)

        pumping = loop.run_in_executor(None, pump)
        try:
            while True:
                event = await events.get()
                if event is _END:
                    break
                if isinstance(event, BaseException):
                    raise event
                yield event
        finally:
            if not block._done:
                block.interrupt()
            await pumping
        self.last_result = block.result

    async def read_file(self, path):
        return await asyncio.to_thread(self._sandbox.read_file, path)

    async def write_file(self, path, data):
        return await asyncio.to_thread(self._sandbox.write_file, path, data)

    async def list_files(self, path="."):
        return await asyncio.to_thread(self._sandbox.list_files, path)

    def interrupt(self, block):
        self._sandbox.interrupt(block)

    async def reset(self, language):
        await asyncio.to_thread(self._sandbox.reset, language)

    async def close(self):
        if self._sandbox is not None:
            await asyncio.to_thread(self._sandbox.close)
