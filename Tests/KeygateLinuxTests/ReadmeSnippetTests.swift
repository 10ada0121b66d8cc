import Foundation
import Testing

/// Every ```swift block of the README compiles as a reader copies it: each block alone, with
/// only the imports it shows, is type-checked by the toolchain's `swiftc` against the modules
/// the build left beside this test bundle. A block that starts with `// swift-tools-version:`
/// is a whole `Package.swift`, checked against the toolchain's PackageDescription. A block that
/// is a test (`@Test`) must also be found word for word (imports aside) in a file under Tests/,
/// where it runs. Text that is not a whole program is fenced without the `swift` tag.
///
/// Missing `swiftc` or missing modules fail the test; it never skips.
@Suite struct ReadmeSnippetTests {
    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// One ```swift block of a Markdown text: the line its code starts on, and the code.
    struct Block {
        let line: Int
        let code: String

        /// A whole `Package.swift` rather than a program.
        var isManifest: Bool { code.hasPrefix("// swift-tools-version:") }

        /// The tools version a manifest block declares (`6.2`).
        var toolsVersion: String? {
            guard isManifest, let first = code.split(separator: "\n").first else { return nil }
            let version = first.dropFirst("// swift-tools-version:".count).drop { $0 == " " }
                .prefix { $0.isNumber || $0 == "." }
            return version.isEmpty ? nil : String(version)
        }

        /// The modules the block imports (`import Keygate` gives `Keygate`).
        var imports: [String] {
            code.split(separator: "\n").compactMap { line in
                let words = line.split(separator: " ")
                return words.count == 2 && words[0] == "import" ? String(words[1]) : nil
            }
        }
    }

    /// The ```swift blocks of `markdown`, in order; other fences (```sh, ```json, ```) are left out.
    static func blocks(of markdown: String) -> [Block] {
        var blocks: [Block] = []
        var current: (line: Int, lines: [Substring])?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let fence = line.trimmingCharacters(in: .whitespaces)
            if current == nil, fence == "```swift" {
                current = (index + 2, [])
            } else if let open = current, fence == "```" {
                blocks.append(Block(line: open.line, code: open.lines.joined(separator: "\n") + "\n"))
                current = nil
            } else {
                current?.lines.append(line)
            }
        }
        return blocks
    }

    /// The directory of the built modules: `Modules` in the build directory holding this test bundle.
    static func modulesDirectory() -> URL? {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        while directory.path != "/" {
            let modules = directory.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: modules.appendingPathComponent("Keygate.swiftmodule").path) {
                return modules
            }
            directory.deleteLastPathComponent()
        }
        return nil
    }

    /// The compiler: `$SWIFTC`, else the first `swiftc` on `PATH` (run by that name: the driver
    /// it links to picks its mode from it).
    static func swiftc() -> URL? {
        let environment = ProcessInfo.processInfo.environment
        let candidates =
            environment["SWIFTC"].map { [$0] }
            ?? (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swiftc" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map(URL.init(fileURLWithPath:))
    }

    /// PackageDescription's modules in the toolchain of `swiftc` (`usr/lib/swift/pm/ManifestAPI`).
    static func manifestAPI(of swiftc: URL) -> String {
        swiftc.resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lib/swift/pm/ManifestAPI").path
    }

    /// The directories of the package's C module maps, which the built modules' interfaces name.
    static func moduleMapDirectories() throws -> [String] {
        let sources = root.appendingPathComponent("Sources")
        return try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted().flatMap { target in
            [target, target + "/include"].map { sources.appendingPathComponent($0).path }
                .filter { FileManager.default.fileExists(atPath: $0 + "/module.modulemap") }
        }
    }

    /// Runs `executable` and returns its exit status and its output and errors together.
    static func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// The README's text.
    static func readme() throws -> String {
        try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    @Test func everyReadmeSwiftBlockTypeChecksWithOnlyItsOwnImports() throws {
        let swiftc = try #require(Self.swiftc(), "no swiftc: put the toolchain on PATH or set SWIFTC")
        let modules = try #require(
            Self.modulesDirectory(), "no built modules beside the test bundle: run swift build --build-tests")
        let manifestAPI = Self.manifestAPI(of: swiftc)
        let includes = try Self.moduleMapDirectories().flatMap { ["-I", $0] }
        let blocks = Self.blocks(of: try Self.readme())
        #expect(blocks.count >= 4, "the README's ```swift blocks were not found")

        let work = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        for (index, block) in blocks.enumerated() {
            let directory = work.appendingPathComponent("block-\(index + 1)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("main.swift")
            // Diagnostics point at the README's own lines.
            try ("#sourceLocation(file: \"README.md\", line: \(block.line))\n" + block.code)
                .write(to: file, atomically: true, encoding: .utf8)
            let flags =
                block.toolsVersion.map { ["-package-description-version", $0, "-I", manifestAPI] }
                ?? ["-I", modules.path] + includes
            let check = try Self.run(
                swiftc,
                ["-typecheck", "-swift-version", "6", "-warnings-as-errors", "-module-name", "ReadmeSample"] + flags
                    + [file.path])
            #expect(check.status == 0, "README.md:\(block.line): the block does not compile as shown:\n\(check.output)")
        }
    }

    /// A package module a block imports is a library product, and the README shows the
    /// `.product(name:package:)` line a reader's `Package.swift` needs for it.
    @Test func everyImportedModuleIsAProductTheReadmeNames() throws {
        let readme = try Self.readme()
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = try FileManager.default.contentsOfDirectory(
            atPath: Self.root.appendingPathComponent("Sources").path)
        for block in Self.blocks(of: readme) {
            for module in block.imports where targets.contains(module) {
                let isProduct = manifest.contains(".library(name: \"\(module)\"")
                #expect(isProduct, "README.md:\(block.line): \(module) is no library product of Package.swift")
                let isNamed = readme.contains(".product(name: \"\(module)\", package: \"keygate\")")
                #expect(isNamed, "README.md:\(block.line): no .product line for \(module) in the README")
            }
        }
    }

    /// A block that is a test runs: it is found, without its imports, in a file under Tests/.
    @Test func everyReadmeTestBlockIsATestThatRuns() throws {
        let tests =
            FileManager.default.enumerator(atPath: Self.root.appendingPathComponent("Tests").path)?
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        let sources = try tests.map {
            try String(contentsOf: Self.root.appendingPathComponent("Tests/" + $0), encoding: .utf8)
        }
        let testBlocks = Self.blocks(of: try Self.readme()).filter { $0.code.contains("@Test") }
        #expect(!testBlocks.isEmpty)
        for block in testBlocks {
            let body = block.code.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("import ") }.drop { $0.isEmpty }.joined(separator: "\n")
            #expect(
                sources.contains { $0.contains(body) },
                "README.md:\(block.line): this test is not in any file under Tests/ word for word")
        }
    }
}
