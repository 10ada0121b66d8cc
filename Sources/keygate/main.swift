import Foundation

exit(await KeygateCommand.run(Array(CommandLine.arguments.dropFirst())).rawValue)
