import FoundationEssentials
import Glibc
public import KeygatePolicy

/// Reads organisation policies from disk: every `.policy` file (text) and `.policy.json`
/// file (the JSON form of ``KeygatePolicy/PolicyDocument``) of a directory, in byte order of their names,
/// combined into one validated ``KeygatePolicy/PolicySet``.
///
/// A missing directory holds no rules; a path that is not a directory, an unreadable file or
/// any error in any file fails the whole load (`errSecParam`, naming `file:line:column`), so
/// a caller keeps its old set or refuses to run: never a half-loaded set.
public enum PolicyDirectory {
    /// The policy files of `directory`, sorted by name; empty when it does not exist.
    /// - Throws: ``KeygatePolicy/KeygateError`` (`errSecParam`) when it is not a directory or cannot be read.
    public static func files(in directory: String) throws(KeygateError) -> [String] {
        guard let isDirectory = Self.isDirectory(directory) else { return [] }
        guard isDirectory else { throw KeygateError(.param, "\(directory): not a policy directory") }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw KeygateError(.param, "\(directory): cannot read the policy directory")
        }
        return names.filter { !$0.hasPrefix(".") && ($0.hasSuffix(".policy") || $0.hasSuffix(".policy.json")) }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { directory.hasSuffix("/") ? directory + $0 : directory + "/" + $0 }
    }

    /// Whether `path` (symbolic links followed) is a directory; nil when nothing is there.
    static func isDirectory(_ path: String) -> Bool? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT == S_IFDIR
    }

    /// The document in one file: `.policy.json` decoded as JSON, anything else parsed as text.
    /// - Throws: ``KeygatePolicy/KeygateError`` (`errSecParam`) naming the file (and line and column for text).
    public static func document(at path: String) throws(KeygateError) -> PolicyDocument {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KeygateError(.param, "\(path): cannot read the policy file")
        }
        if path.hasSuffix(".json") {
            do {
                // JSON carries no positions: errors name the file (line 0 means unknown).
                var document = try JSONDecoder().decode(PolicyDocument.self, from: data)
                let unknown = SourceLocation(file: path, line: 0, column: 0)
                for index in document.rules.indices where document.rules[index].location == nil {
                    document.rules[index].location = unknown
                }
                for index in document.grants.indices where document.grants[index].location == nil {
                    document.grants[index].location = unknown
                }
                return document
            } catch {
                throw KeygateError(.param, "\(path): invalid JSON policy: \(error)")
            }
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw KeygateError(.param, "\(path): the policy file is not UTF-8 text")
        }
        do {
            return try PolicyParser.parse(text, file: path)
        } catch {
            throw error.keygateError
        }
    }

    /// Every policy of `paths` (directories or single files), combined in order and validated.
    /// - Throws: ``KeygatePolicy/KeygateError`` (`errSecParam`) for the first problem, naming `file:line:column`.
    public static func load(_ paths: [String]) throws(KeygateError) -> PolicySet {
        var combined = PolicyDocument()
        for path in paths {
            // One stat for a missing path (the usual user directory): nothing to read there.
            let files: [String]
            switch Self.isDirectory(path) {
            case nil: files = []
            case false?: files = [path]
            case true?: files = try Self.files(in: path)
            }
            for file in files {
                let document = try document(at: file)
                combined.rules += document.rules
                combined.grants += document.grants
            }
        }
        do {
            return try PolicySet(document: combined)
        } catch {
            throw error.keygateError
        }
    }

    /// Warnings (lint) for the policies of `paths`, as `file:line:column: message`.
    /// Beside the validator's lint, what only the files here can tell: an exact program path
    /// that resolves to another (a symbolic link anywhere in it: the kernel names the resolved
    /// file, so it never matches) is named with its target, and one that is a script (`#!`: the
    /// kernel names its interpreter, so it never matches) is named as one.
    public static func warnings(_ set: PolicySet) -> [String] {
        PolicyValidator.validate(set.document).warnings.map(\.description) + fileWarnings(set.document)
    }

    /// The warnings about the files that `document`'s exact program paths name here.
    static func fileWarnings(_ document: PolicyDocument) -> [String] {
        ProgramPathLint.programPaths(document).compactMap { named -> String? in
            guard named.isExact, named.pattern.hasPrefix("/") else { return nil }
            let path = named.pattern
            var info = stat()
            guard lstat(path, &info) == 0 || errno != ENOENT else { return nil }
            let resolved = realpath(path, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            }
            if resolved != path {
                let message =
                    "\(named.owner) names \(path), which is a symbolic link or lies behind one: the kernel names "
                    + (resolved.map { "the file it resolves to (\($0)), so this never matches; name \($0) instead" }
                        ?? "the file it resolves to, which does not exist here, so this never matches")
                return PolicyParseError(named.location, message).description
            }
            guard Self.startsWithShebang(path) else { return nil }
            return PolicyParseError(
                named.location,
                "\(named.owner) names \(path), a script: the kernel names its interpreter as the caller's program, "
                    + "so this never matches (see Policies/README.md for granting one script)"
            ).description
        }
    }

    /// Whether the file at `path` begins with `#!`.
    private static func startsWithShebang(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var head: (UInt8, UInt8) = (0, 0)
        let count = withUnsafeMutableBytes(of: &head) { read(descriptor, $0.baseAddress, 2) }
        return count == 2 && head.0 == UInt8(ascii: "#") && head.1 == UInt8(ascii: "!")
    }
}

extension PolicyStore {
    /// Reloads from `paths` (see `PolicyDirectory.load(_:)`): the whole new set is put in
    /// force, or, on any error, the old one stays and the error is thrown. The outcome is
    /// audited (`policyReload`) when an auditor is given; a reload whose record cannot be
    /// written is not applied.
    public func reload(from paths: [String], auditor: Auditor? = nil) throws(KeygateError) {
        let next: PolicySet
        do throws(KeygateError) {
            next = try PolicyDirectory.load(paths)
        } catch {
            try auditor?.record(
                AuditEvent(
                    kind: .policyReload, decision: .deny, status: error.status,
                    notes: [.policyKept(rules: policies.ruleCount, message: error.message)]))
            throw error
        }
        try auditor?.record(
            AuditEvent(
                kind: .policyReload, ruleIDs: next.document.rules.map(\.name), decision: .allow,
                notes: [.policyLoaded(rules: next.ruleCount, grants: next.document.grants.count, paths: paths)]))
        replace(with: next)
    }
}
