import Foundation

let words = HelperInvocation.words(invokedAs: CommandLine.arguments[0], Array(CommandLine.arguments.dropFirst()))
exit(await KeygateCommand.run(words).rawValue)
