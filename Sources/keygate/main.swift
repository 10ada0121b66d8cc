import Foundation

let status: ExitStatus
do throws(Arguments.UsageError) {
    status = await KeygateCommand.run(try Arguments.commandLine())
} catch {
    status = KeygateCommand.fail(usage: error, help: KeygateCommand.usage)
}
exit(status.rawValue)
