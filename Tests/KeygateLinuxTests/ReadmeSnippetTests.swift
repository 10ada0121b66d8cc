import Foundation
import Testing

/// Every ```swift block of the README is code the tests compile: the library and engine
/// examples in `ReadmeSnippets.swift`, the testing example in KeygateTestingTests (where it
/// also runs). Compared without imports, comments and whitespace, so formatting may differ.
@Suite struct ReadmeSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func blocks(of markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.hasPrefix("```swift") {
                current = []
            } else if current != nil, line.hasPrefix("```") {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The code without import lines, comments and whitespace.
    static func essence(_ code: String) -> String {
        code.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("import ") }
            .map { line in line.range(of: "//").map { line[..<$0.lowerBound] } ?? line }
            .joined().filter { !$0.isWhitespace }
    }

    @Test func everyReadmeSwiftBlockIsCompiledByATest() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let sources = try [
            "Tests/KeygateLinuxTests/ReadmeSnippets.swift", "Tests/KeygateTestingTests/ReadmeExampleTests.swift",
        ].map { try String(contentsOf: Self.root.appendingPathComponent($0), encoding: .utf8) }
        let compiled = sources.map(Self.essence).joined()
        let blocks = Self.blocks(of: readme)
        #expect(blocks.count >= 3)
        for block in blocks {
            #expect(compiled.contains(Self.essence(block)), "a README block is not compiled by any test:\n\(block)")
        }
    }
}
