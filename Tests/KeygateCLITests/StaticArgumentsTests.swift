import Foundation
import KeygateTesting
import Testing

/// The trap of issue 10 point 4: a `-static-stdlib` program started with
/// `LD_PRELOAD=libpam_wrapper.so` (and `PAM_WRAPPER=1`) saw no arguments at all. The static
/// runtime finds argv by walking back from `environ`, which pam_wrapper's constructor had moved
/// to the heap with setenv(); the CCommandLine hook hands the runtime the argv glibc gives
/// init_array functions. The same one-line program is built with and without the hook.
@Suite(.serialized) struct StaticArgumentsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Runs `tool` with `arguments` and `environment` (added to PATH); its standard output and status.
    static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (
        String, Int32
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
            .merging(environment) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
    }

    /// The toolchain's own `swiftc` and `clang` (beside the `swift` running the tests, else on PATH).
    static func tool(_ name: String) -> String {
        let toolchain = "/opt/swift/usr/bin/" + name
        if FileManager.default.isExecutableFile(atPath: toolchain) { return toolchain }
        return "/usr/bin/" + name
    }

    @Test func aStaticProgramUnderPamWrapperGetsItsArgumentsWithTheHook() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.path
        try "print(CommandLine.arguments.dropFirst().joined(separator: \" \"))\n".write(
            toFile: path + "/main.swift", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: path + "/pam.d", withIntermediateDirectories: true)
        try "auth required pam_permit.so\n".write(toFile: path + "/pam.d/other", atomically: true, encoding: .utf8)
        let hook = Self.root + "/Sources/CCommandLine"
        #expect(
            try Self.run(
                Self.tool("clang"),
                ["-c", "-O2", "-I", hook + "/include", hook + "/capture.c", "-o", path + "/capture.o"]
            ).1 == 0)
        for (name, extra) in [("plain", [String]()), ("hooked", [path + "/capture.o"])] {
            #expect(
                try Self.run(
                    Self.tool("swiftc"), ["-static-stdlib", path + "/main.swift"] + extra + ["-o", path + "/" + name]
                ).1 == 0)
        }
        let wrapper = [
            "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libpam_wrapper.so", "PAM_WRAPPER": "1",
            "PAM_WRAPPER_SERVICE_DIR": path + "/pam.d",
        ]
        #expect(try Self.run(path + "/plain", ["a", "-b", "c d"]).0 == "a -b c d\n")
        #expect(try Self.run(path + "/hooked", ["a", "-b", "c d"]).0 == "a -b c d\n")
        #expect(try Self.run(path + "/hooked", ["a", "-b", "c d"], environment: wrapper).0 == "a -b c d\n")
        // The trap itself, without the hook (should a toolchain stop needing the hook, this says so).
        #expect(try Self.run(path + "/plain", ["a", "-b", "c d"], environment: wrapper).0 == "\n")
    }
}
