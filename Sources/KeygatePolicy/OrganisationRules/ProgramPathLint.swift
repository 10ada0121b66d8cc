/// Warnings about program paths a policy names (grants and `match program` selectors) that
/// cannot mean what they seem to: the kernel names a caller's program as the executable file it
/// runs (`/proc/<pid>/exe`), which for a script is its interpreter.
///
/// This part needs no file system: a path whose last component is a known interpreter (or a
/// multi-call program such as `env` or `busybox`) admits every script or command that
/// interpreter runs. Symbolic links, which never match (the kernel gives the resolved file), are
/// looked up where files are read (`PolicyDirectory.warnings` in `Keygate`).
public enum ProgramPathLint {
    /// Every exact program path of `document`, with where it is named and what names it.
    public static func programPaths(_ document: PolicyDocument) -> [(
        path: String, location: SourceLocation, owner: String
    )] {
        var paths: [(String, SourceLocation, String)] = []
        for grant in document.grants {
            let at = grant.location ?? SourceLocation(file: "(json)", line: 0, column: 0)
            for program in grant.programs where Glob(program).isExact {
                paths.append((program, at, "the grant of '\(grant.accessGroup)'"))
            }
        }
        for rule in document.rules {
            let at = rule.location ?? SourceLocation(file: "(json)", line: 0, column: 0)
            for selector in rule.selectors where selector.field == .program {
                for program in selector.patterns where Glob(program).isExact {
                    paths.append((program, at, "rule '\(rule.name)'"))
                }
            }
        }
        return paths
    }

    /// A warning for each exact program path that names a known interpreter.
    public static func interpreterWarnings(_ document: PolicyDocument) -> [PolicyParseError] {
        programPaths(document).compactMap { path, at, owner in
            guard isInterpreter(path) else { return nil }
            return PolicyParseError(
                at,
                "\(owner) names the interpreter \(path): the kernel names the interpreter, not the script, "
                    + "as the caller's program, so every script it runs matches (grant a dedicated copy of "
                    + "the interpreter or a compiled launcher; see Policies/README.md)")
        }
    }

    /// Whether the last component of `path` is a known script interpreter or multi-call program
    /// (`python3`, `python3.11`, `perl`, `node`, `bash`, `env`, `busybox`, …).
    public static func isInterpreter(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        // A version suffix ("3", "3.11", "5.36.0", "-5.4") is the same interpreter.
        var base = Substring(name)
        while let last = base.last, last.isNumber || last == "." || last == "-" { base.removeLast() }
        return interpreters.contains(String(base))
    }

    static let interpreters: Set<String> = [
        "python", "pypy", "perl", "ruby", "node", "nodejs", "deno", "bun", "php", "lua", "luajit", "tclsh", "wish",
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "pwsh", "java", "Rscript", "R", "gjs",
        "guile", "racket", "sbcl", "ocaml", "julia", "expect", "awk", "gawk", "mawk", "env", "busybox", "toybox",
    ]
}
