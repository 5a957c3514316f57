# A small X11 application for the computer-use tests (tests/agent/computer_e2e_test.cc): a red window filling the
# 1024x768 screen, a text field at (100, 100)-(500, 140) and a Save button at (100, 200)-(260, 250). Save writes the
# field's text to form-output.txt in the current directory and closes the window. form-ready is written once the
# window is on the screen.
import tkinter as tk

root = tk.Tk()
root.title("form")
root.geometry("1024x768+0+0")
root.configure(bg="#c81e1e")
field = tk.Entry(root, font=("TkFixedFont", 16))
field.place(x=100, y=100, width=400, height=40)


def save():
    with open("form-output.txt", "w") as f:
        f.write(field.get())
    root.destroy()


tk.Button(root, text="Save", command=save).place(x=100, y=200, width=160, height=50)


def ready():
    with open("form-ready", "w") as f:
        f.write("ready")


root.after(300, ready)
root.mainloop()
