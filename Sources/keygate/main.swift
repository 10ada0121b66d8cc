import Foundation

exit(KeygateCommand.run(Array(CommandLine.arguments.dropFirst())).rawValue)
