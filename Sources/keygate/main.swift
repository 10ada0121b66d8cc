import FoundationEssentials
import Glibc

let status: ExitStatus
do throws(Arguments.UsageError) {
    let words = HelperInvocation.words(invokedAs: CommandLine.arguments.first ?? "keygate", try Arguments.commandLine())
    status = await KeygateCommand.run(words)
} catch {
    status = KeygateCommand.fail(usage: error, help: KeygateCommand.usage)
}
exit(status.rawValue)
