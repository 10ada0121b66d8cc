public import KeygatePolicy

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The decision corpus: access-control cases stated as data (`Policies/conformance/*.json`),
/// each citing the row of the behavioural spec it proves. The same cases run against the
/// library and against the `keygate evaluate` binary.
///
/// A case:
/// ```json
/// {"id": "class-ak-locked-read", "spec": "§6.1 row 1: device locked, ak item read",
///  "accessControl": "devicePasscode", "accessible": "whenUnlocked", "boundEnrollment": ["f1"],
///  "operation": "read", "context": {"device": {"locked": true}},
///  "expect": {"decision": "deny", "statusName": "errSecInteractionNotAllowed", "reasons": ["classUnavailable"]}}
/// ```
/// `expect` is either `{"error": "errSecParam"}` (the request itself is invalid) or a decision
/// with optional `statusName`, `requirement` (text) and `reasons` (codes that must all appear).
public struct DecisionCase: Sendable, CustomStringConvertible {
    /// A unique identifier.
    public let id: String
    /// The spec row the case proves.
    public let spec: String
    /// Where the case is, as `file:line`.
    public let location: String
    /// Comma-separated flag names, if given.
    public let accessControl: String?
    /// The class name, if given.
    public let accessible: String?
    /// The enrollment set bound at add time, if given.
    public let boundEnrollment: [String]?
    /// The operation, if given.
    public let operation: String?
    /// The context file's text (compact JSON).
    public let contextText: String
    /// What must happen.
    public let expectation: Expectation

    private let contextField: JSONField

    /// What a case expects.
    public enum Expectation: Sendable {
        /// Building the request fails with this status.
        case error(KeygateStatus)
        /// The evaluator decides `kind` (`allow`, `deny`, `authenticate`).
        case decision(kind: String, status: KeygateStatus?, requirement: String?, reasonCodes: [String])
    }

    /// `id (spec)`.
    public var description: String { "\(id) (\(spec)) at \(location)" }

    /// The case's context, decoded.
    public func context() throws(InputFileError) -> ContextFile { try ContextFile(field: contextField) }

    /// The arguments `keygate evaluate` takes for this case, given the context file's path.
    public func commandLine(contextPath: String) -> [String] {
        var words = ["evaluate", "--context", contextPath]
        if let accessControl { words += ["--access-control", accessControl] }
        if let accessible { words += ["--accessible", accessible] }
        if let boundEnrollment { words += ["--bound-enrollment", boundEnrollment.joined(separator: ",")] }
        if let operation { words += ["--operation", operation] }
        return words
    }

    /// What went wrong when `observed` does not meet the expectation; empty when it does.
    public func mismatches(_ observed: ObservedOutcome) -> [String] {
        var problems: [String] = []
        switch (expectation, observed) {
        case (.error(let expected), .error(let status)):
            if status != expected { problems.append("expected error \(expected), got error \(status)") }
        case (.error(let expected), .decision(let kind, _, _, _)):
            problems.append("expected error \(expected), got a decision '\(kind)'")
        case (.decision(let kind, _, _, _), .error(let status)):
            problems.append("expected decision '\(kind)', got error \(status)")
        case (
            .decision(let kind, let status, let requirement, let codes),
            .decision(let gotKind, let gotStatus, let gotRequirement, let gotCodes)
        ):
            if kind != gotKind { problems.append("expected decision '\(kind)', got '\(gotKind)'") }
            if let status, status != gotStatus {
                problems.append("expected status \(status), got \(gotStatus.map(\.description) ?? "none")")
            }
            if let requirement, requirement != gotRequirement {
                problems.append("expected requirement '\(requirement)', got '\(gotRequirement ?? "none")'")
            }
            for code in codes where !gotCodes.contains(code) {
                problems.append("expected reason '\(code)' among \(gotCodes)")
            }
        }
        return problems
    }

    init(field: JSONField) throws(InputFileError) {
        let object = try field.object(allowing: [
            "id", "spec", "accessControl", "accessible", "boundEnrollment", "operation", "context", "expect",
        ])
        guard let id = try object["id"]?.string() else { throw field.error("a case needs an 'id'") }
        guard let spec = try object["spec"]?.string(), !spec.isEmpty else {
            throw field.error("case '\(id)' must cite the spec row it proves ('spec')")
        }
        self.id = id
        self.spec = spec
        self.location = "\(field.file):\(field.node.line)"
        accessControl = try object["accessControl"]?.string()
        accessible = try object["accessible"]?.string()
        boundEnrollment = try object["boundEnrollment"]?.array().map { (item: JSONField) throws(InputFileError) in
            try item.string()
        }
        operation = try object["operation"]?.string()
        contextField = object["context"] ?? JSONField(node: JSONNode(.object([])), path: "context", file: field.file)
        contextText = contextField.node.value.rendered
        guard let expect = object["expect"] else { throw field.error("case '\(id)' needs 'expect'") }
        let fields = try expect.object(allowing: ["error", "decision", "statusName", "requirement", "reasons"])
        func status(_ field: JSONField) throws(InputFileError) -> KeygateStatus {
            let name = try field.string()
            guard let status = KeygateStatus(name: name) else { throw field.error("unknown status '\(name)'") }
            return status
        }
        if let error = fields["error"] {
            expectation = .error(try status(error))
        } else {
            guard let kind = try fields["decision"]?.choice(["allow", "deny", "authenticate"]) else {
                throw expect.error("'expect' needs 'error' or 'decision'")
            }
            let codes = try fields["reasons"]?.array().map { (item: JSONField) throws(InputFileError) in
                try item.string()
            }
            expectation = .decision(
                kind: kind, status: try fields["statusName"].map(status),
                requirement: try fields["requirement"]?.string(), reasonCodes: codes ?? [])
        }
    }
}

/// What a run produced for a case, from the library or from the CLI.
public enum ObservedOutcome: Sendable {
    /// The request failed with a status.
    case error(KeygateStatus)
    /// A decision: its kind, status, requirement text and reason codes.
    case decision(kind: String, status: KeygateStatus?, requirement: String?, reasonCodes: [String])

    /// The outcome of evaluating `decisionCase` with the library.
    public static func library(_ decisionCase: DecisionCase, evaluator: Evaluator = Evaluator()) throws(InputFileError)
        -> ObservedOutcome
    {
        let request: EvaluationRequest
        do {
            request = try EvaluationRequest(
                flags: decisionCase.accessControl, accessible: decisionCase.accessible,
                boundEnrollment: decisionCase.boundEnrollment, operation: decisionCase.operation)
        } catch {
            return .error(error.status)
        }
        let context = try decisionCase.context()
        let decision = evaluator.evaluate(
            request.control, operation: request.operation, state: context.state, now: context.now)
        return .decision(
            kind: decision.outcome.name, status: decision.status, requirement: decision.requirement?.description,
            reasonCodes: decision.reasons.map(\.code))
    }
}

/// Loads the decision corpus.
public enum DecisionCorpus {
    /// `Policies/conformance` of this checkout.
    public static let defaultDirectory: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Sources/KeygateTesting/DecisionCorpus.swift
        return parts.joined(separator: "/") + "/Policies/conformance"
    }()

    /// Every case of every `*.json` file in `directory`, in file-name order.
    /// - Throws: ``KeygatePolicy/InputFileError`` for a malformed file or a duplicate id.
    public static func load(directory: String = defaultDirectory) throws -> [DecisionCase] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
            .sorted()
        var cases: [DecisionCase] = []
        var seen: Set<String> = []
        for name in names {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else {
                throw InputFileError(file: path, line: 0, column: 0, field: "", problem: "cannot read the file")
            }
            let root = try JSONField.parse(String(decoding: data, as: UTF8.self), file: path)
            let top = try root.object(allowing: ["description", "cases"])
            guard let list = top["cases"] else { throw root.error("a corpus file needs 'cases'") }
            for item in try list.array() {
                let decisionCase = try DecisionCase(field: item)
                guard seen.insert(decisionCase.id).inserted else {
                    throw item.error("duplicate case id '\(decisionCase.id)'")
                }
                cases.append(decisionCase)
            }
        }
        return cases
    }
}
