import KeygateCLI

KeygateTool.start()
