import Foundation
import Keygate
public import KeygatePolicy

/// Policy test files from Swift Testing or XCTest: load a file, then check each case and
/// report which rules decided when it fails.
///
/// ```swift
/// @Test func bankPolicies() throws {
///     let suite = try PolicyTestSuite(path: "Policies/examples/payment-tokens.tests.json")
///     for testCase in suite.cases { suite.expect(testCase) }
/// }
/// ```
public struct PolicyTestSuite: Sendable {
    /// The policies the file names, loaded and validated.
    public let policies: PolicySet
    /// The cases.
    public let cases: [PolicyCase]
    /// The test file's path.
    public let path: String

    /// Loads a policy test file (JSON) and the policies it names (relative to it).
    /// - Throws: ``KeygatePolicy/KeygateError`` (`errSecParam`) for an unreadable or invalid file or policy;
    ///   a bad value or an unknown key is named by file, line, column and field.
    public init(path: String) throws(KeygateError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KeygateError(.param, "\(path): cannot read the policy test file")
        }
        let file: PolicyTestFile
        do throws(InputFileError) {
            file = try PolicyTestFile(parsing: String(decoding: data, as: UTF8.self), file: path)
        } catch {
            throw KeygateError(.param, error.description)
        }
        let base = (path as NSString).deletingLastPathComponent
        self.policies = try PolicyDirectory.load(
            file.policies.map { $0.hasPrefix("/") ? $0 : (base as NSString).appendingPathComponent($0) })
        self.cases = file.cases
        self.path = path
    }

    /// Nil when `testCase` decides as expected, else what was expected and what came out.
    public func check(_ testCase: PolicyCase) -> String? {
        testCase.check(in: policies).map { "\(path): \($0)" }
    }

    /// Reports a failing case to the running test (Swift Testing or XCTest).
    public func expect(_ testCase: PolicyCase, filePath: StaticString = #filePath, line: UInt = #line) {
        TestFailure.report(check(testCase), filePath: filePath, line: line)
    }

    /// Every failing case's message; empty when all pass.
    public func failures() -> [String] { cases.compactMap(check) }
}
