/// Warnings about program paths a policy names (grants and `match program` selectors) that
/// cannot mean what they seem to: the kernel names a caller's program as the executable file it
/// runs (`/proc/<pid>/exe`), which for a script is its interpreter.
///
/// This part needs no file system: a path whose last component is a known interpreter (or a
/// program that runs others: `env`, `busybox`, the dynamic loader, a debugger) admits every
/// script or program it runs. Symbolic links (which never match: the kernel gives the resolved
/// file) and scripts (`#!`: the kernel names their interpreter, so they never match) are looked
/// up where files are read (`PolicyDirectory.warnings` in `Keygate`).
public enum ProgramPathLint {
    /// Where a program path is named: a grant, or a rule's `match program`.
    public enum Owner: Sendable, Equatable, CustomStringConvertible {
        /// The grant of this access group.
        case grant(accessGroup: String)
        /// The rule of this name.
        case rule(name: String)

        /// "the grant of 'G'" or "rule 'R'".
        public var description: String {
            switch self {
            case .grant(let group): "the grant of '\(group)'"
            case .rule(let name): "rule '\(name)'"
            }
        }
    }

    /// A program path pattern of a policy, where it is named and by what.
    public struct Named: Sendable {
        /// The pattern as written.
        public let pattern: String
        /// True when it has no wildcard.
        public let isExact: Bool
        /// Where it is named.
        public let location: SourceLocation
        /// What names it.
        public let owner: Owner
    }

    /// Every program path pattern of `document`, grants first.
    public static func programPaths(_ document: PolicyDocument) -> [Named] {
        var paths: [Named] = []
        for grant in document.grants {
            let at = grant.location ?? SourceLocation(file: "(json)", line: 0, column: 0)
            for program in grant.programs {
                paths.append(
                    Named(
                        pattern: program, isExact: Glob(program).isExact, location: at,
                        owner: .grant(accessGroup: grant.accessGroup)))
            }
        }
        for rule in document.rules {
            let at = rule.location ?? SourceLocation(file: "(json)", line: 0, column: 0)
            for selector in rule.selectors where selector.field == .program {
                for program in selector.patterns {
                    paths.append(
                        Named(
                            pattern: program, isExact: Glob(program).isExact, location: at,
                            owner: .rule(name: rule.name)))
                }
            }
        }
        return paths
    }

    /// A warning for each program path whose last component is (or, for a pattern, begins with)
    /// a known interpreter or program runner.
    public static func interpreterWarnings(_ document: PolicyDocument) -> [PolicyParseError] {
        programPaths(document).compactMap { named in
            guard isInterpreter(named.pattern) else { return nil }
            let what = named.isExact ? "the interpreter \(named.pattern)" : "interpreters (\(named.pattern))"
            let consequence =
                "the kernel names the interpreter, not the script, as the caller's program, so every script it runs matches"
            switch named.owner {
            case .grant:
                return PolicyParseError(
                    named.location,
                    "\(named.owner) names \(what): \(consequence) (grant a dedicated copy of the interpreter or a "
                        + "compiled launcher; see Policies/README.md)")
            case .rule:
                return PolicyParseError(named.location, "\(named.owner) names \(what): \(consequence)")
            }
        }
    }

    /// Whether the last component of `path` is a known script interpreter or program runner
    /// (`python3`, `python3.11`, `python3.6m`, `perl`, `node`, `bash`, `env`, `busybox`,
    /// `ld-linux-x86-64.so.2`, …); for a pattern, whether its literal part before the first
    /// wildcard is one.
    public static func isInterpreter(_ path: String) -> Bool {
        var name = Substring(path.split(separator: "/", omittingEmptySubsequences: false).last ?? Substring(path))
        if let wildcard = name.firstIndex(where: { $0 == "*" || $0 == "?" }) { name = name[..<wildcard] }
        if name.hasPrefix("ld-linux") || name.hasPrefix("ld.so") || name.hasPrefix("ld64.so") || name.hasPrefix("qemu-")
        {
            return true
        }
        // A version suffix ("3", "3.11", "5.36.0", "-5.4", an ABI letter as in "3.6m") is the same interpreter.
        if let last = name.last, "dmu".contains(last), name.dropLast().last?.isNumber == true { name.removeLast() }
        while let last = name.last, last.isNumber || last == "." || last == "-" { name.removeLast() }
        return interpreters.contains(String(name))
    }

    static let interpreters: Set<String> = [
        "python", "pypy", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "luajit", "tclsh", "wish",
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "pwsh", "java", "Rscript", "R", "gjs",
        "guile", "racket", "sbcl", "ocaml", "julia", "expect", "awk", "gawk", "mawk", "raku", "groovy", "erl",
        "escript", "dotnet", "mono", "gdb", "env", "busybox", "toybox",
    ]
}
