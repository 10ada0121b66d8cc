import Foundation
import Testing

/// The man page keygate(1) and the bash, zsh and fish completions cover every command and
/// every option the binary's help prints (issue 11, point 5).
@Suite struct DocumentationTests {
    static let manPage = "Documentation/man/keygate.1"

    /// mandoc's linter passes at warning level. mandoc is installed by `.ci/run` and `make`;
    /// a missing mandoc fails this test rather than skipping it.
    @Test func manPagePassesMandocLint() throws {
        let lint = try DocumentationCoverage.run(["mandoc", "-T", "lint", "-W", "warning", Self.manPage])
        #expect(lint.status == 0, "\(lint.output)")
        #expect(lint.output.isEmpty, "\(lint.output)")
    }

    /// The page as a reader sees it (mandoc's rendering, overstrike removed).
    static func renderedManPage() throws -> String {
        let page = try DocumentationCoverage.run(["mandoc", "-T", "ascii", "-O", "width=300", Self.manPage])
        #expect(page.status == 0, "\(page.output)")
        return page.output.replacingOccurrences(of: ".\u{8}", with: "", options: .regularExpression)
    }

    @Test func manPageCoversEveryCommandAndOption() throws {
        let page = try Self.renderedManPage()
        #expect(page.contains("EXIT STATUS") && page.contains("ENVIRONMENT") && page.contains("FILES"))
        let commands = DocumentationCoverage.commandNames()
        #expect(commands.count >= 14)
        for command in commands {
            #expect(DocumentationCoverage.contains(page, word: command), "command \(command)")
        }
        for (command, options) in try DocumentationCoverage.optionsByCommand() {
            for option in options {
                #expect(DocumentationCoverage.contains(page, word: option), "\(command ?? "global") \(option)")
            }
        }
        for helper in ["git-credential-keygate", "docker-credential-keygate"] {
            #expect(page.contains(helper))
        }
        for variable in [
            "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_SESSION_ID", "KEYGATE_DEVICE_STATE", "KEYGATE_ENROLLMENT_FILE",
            "KEYGATE_REUSE_SECONDS",
        ] {
            #expect(page.contains(variable), "\(variable)")
        }
        for status in 0...10 {
            #expect(page.range(of: #"(?m)^\s+\#(status)\s"#, options: .regularExpression) != nil, "exit \(status)")
        }
    }

    /// bash and zsh spell options as typed (`-s`, `--service`); fish as `-s s` and `-l service`.
    @Test(arguments: ["keygate.bash", "_keygate", "keygate.fish"])
    func completionCoversEveryCommandAndOption(file: String) throws {
        let text = try DocumentationCoverage.file("Documentation/completions/" + file)
        for command in DocumentationCoverage.commandNames() {
            #expect(DocumentationCoverage.contains(text, word: command), "\(file): command \(command)")
        }
        for (command, options) in try DocumentationCoverage.optionsByCommand() {
            for option in options {
                let spelling =
                    file.hasSuffix(".fish")
                    ? (option.hasPrefix("--") ? "-l " + option.dropFirst(2) : "-s " + option.dropFirst())
                    : option
                #expect(
                    DocumentationCoverage.contains(text, word: spelling), "\(file): \(command ?? "global") \(option)")
            }
        }
    }

    /// bash completes each command's own options: its `case` arm lists every option its help prints.
    @Test func bashCompletesEachCommandsOwnOptions() throws {
        let text = try DocumentationCoverage.file("Documentation/completions/keygate.bash")
        for (command, options) in try DocumentationCoverage.optionsByCommand() {
            guard let command else { continue }
            let pattern = #"(?m)^\s+(?:[a-z-]+ \| )*"# + command + #"(?: \| [a-z-]+)*\)[^;]*"#
            guard let arm = text.range(of: pattern, options: .regularExpression).map({ String(text[$0]) }) else {
                Issue.record("no case arm for \(command)")
                continue
            }
            for option in options where option != "--help" && option != "-h" {
                // Global options a command's help mentions (evaluate names --audit, policy --policies) are
                // completed before it.
                if [
                    "--audit", "--pam-service", "--pam-biometry-service", "--passphrase-fd", "--policies", "--daemon",
                    "--reuse-seconds",
                ].contains(option) {
                    continue
                }
                #expect(DocumentationCoverage.contains(arm, word: option), "bash \(command) \(option): \(arm)")
            }
        }
    }

    /// The values completed for the options that take a fixed set match what keygate accepts.
    @Test(arguments: ["keygate.bash", "_keygate", "keygate.fish"])
    func completionOffersTheValueVocabularies(file: String) throws {
        let text = try DocumentationCoverage.file("Documentation/completions/" + file)
        let classes = [
            "whenPasscodeSetThisDeviceOnly", "whenUnlockedThisDeviceOnly", "whenUnlocked",
            "afterFirstUnlockThisDeviceOnly", "afterFirstUnlock", "alwaysThisDeviceOnly", "always",
        ]
        let flags = [
            "userPresence", "biometryAny", "biometryCurrentSet", "devicePasscode", "companion", "or", "and",
            "privateKeyUsage", "applicationPassword",
        ]
        for word in classes + flags + ["logind", "unlocked", "locked", "passcode", "biometry", "presence", "read"] {
            #expect(DocumentationCoverage.contains(text, word: word), "\(file): \(word)")
        }
    }
}
