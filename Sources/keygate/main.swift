import KeygateCLI

await KeygateTool.main()
