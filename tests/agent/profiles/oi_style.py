"""A profile in the style of Open Interpreter's Python profiles (written for these tests)."""
from datetime import date

from interpreter import interpreter

try:
    import a_module_the_sandbox_does_not_have  # noqa: F401
except ImportError:
    print("optional dependency missing")

interpreter.llm.model = "ollama/codestral"
interpreter.llm.context_window = 7000
interpreter.llm.max_tokens = 1000
interpreter.llm.supports_functions = False
interpreter.llm.load()  # OI: loads the Ollama model

interpreter.computer.import_computer_api = True
interpreter.computer.skills.path = "./skills"

interpreter.auto_run = False
interpreter.max_output = 1234
interpreter.loop_breakers = ["Done.", "Impossible."]
interpreter.system_message = """You write code.
Keep it short.""".strip()
interpreter.custom_instructions = f"Today is {date.today().isoformat()}."
interpreter.custom_instructions += " Be brief."

interpreter.display_message("> Model set to `codestral`")
