/// `keygate` installed under a credential helper's name (a link) runs that helper's command:
/// `git-credential-keygate [global options] [options] ACTION` is
/// `keygate [global options] credential [options] ACTION`, and
/// `docker-credential-keygate ACTION` is `keygate docker-credential ACTION`.
enum HelperInvocation {
    /// The command line to run for a program started as `name` with `words`.
    static func words(invokedAs name: String, _ words: [String]) -> [String] {
        let program = name.split(separator: "/").last.map(String.init) ?? name
        switch program {
        case "git-credential-keygate":
            // Global options (a store, a reuse window) may come first; the command's own follow.
            var index = 0
            while index < words.count, words[index].hasPrefix("--") {
                let name = String(words[index].dropFirst(2).prefix { $0 != "=" })
                guard let option = GlobalOptions.options.first(where: { $0.name == name }) else { break }
                index += option.takesValue && !words[index].contains("=") ? 2 : 1
            }
            let split = min(index, words.count)
            return Array(words[..<split]) + ["credential"] + Array(words[split...])
        case "docker-credential-keygate":
            return ["docker-credential"] + words
        default:
            return words
        }
    }
}
