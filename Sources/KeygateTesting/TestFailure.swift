import Foundation
import Testing
import XCTest

/// Reports an assertion's failure message to whichever test library is running the test.
enum TestFailure {
    static func report(_ message: String?, filePath: StaticString, line: UInt) {
        guard let message else { return }
        if Test.current != nil {
            Issue.record(
                Comment(rawValue: message),
                sourceLocation: SourceLocation(
                    fileID: "\(filePath)", filePath: "\(filePath)", line: Int(line), column: 1))
        } else {
            XCTFail(message, file: filePath, line: line)
        }
    }
}

/// Golden files: compare a text with a file, or write it when asked to.
enum Golden {
    static func check(_ text: String, against path: String) -> String? {
        if ProcessInfo.processInfo.environment["KEYGATE_UPDATE_GOLDEN"] == "1" {
            do {
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                return nil
            } catch {
                return "could not write the golden file \(path): \(error)"
            }
        }
        guard let expected = try? String(contentsOfFile: path, encoding: .utf8) else {
            return "no golden file at \(path); run with KEYGATE_UPDATE_GOLDEN=1 to create it"
        }
        guard expected != text else { return nil }
        let want = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let got = text.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(want.count, got.count) {
            let a = index < want.count ? String(want[index]) : "(nothing)"
            let b = index < got.count ? String(got[index]) : "(nothing)"
            if a != b {
                return "the trail differs from \(path) at line \(index + 1):\n  golden: \(a)\n  actual: \(b)"
            }
        }
        return "the trail differs from \(path)"
    }
}
