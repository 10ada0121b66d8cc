// Organisation rules: microseconds per decision against 10 / 1,000 / 100,000 rules, for a
// request some rule matches and one no rule matches. The index (exact service, then glob
// prefixes) keeps the cost about flat as the rule count grows.

import Foundation
import Glibc
import KeygatePolicy

/// Rule `i`: exact service `svc-i` (even i) or the glob `com.example.svc-i.*` (odd i), a
/// freshness bound on reads, and a forbid on export for every 7th.
func generatedPolicies(rules count: Int) -> PolicySet {
    var text = ""
    for index in 0..<count {
        let selector = index % 2 == 0 ? "\"svc-\(index)\"" : "\"com.example.svc-\(index).*\""
        text += "rule \"r\(index)\" { match service \(selector) on read require fresh \(index % 300)s"
        text += index % 7 == 0 ? " forbid export }\n" : " }\n"
    }
    return try! PolicySet(files: [("generated.policy", text)])
}

/// The table rows: rules, request, result, µs/decision.
func policyRows(iterations: Int) -> [[String]] {
    var rows: [[String]] = [["rules", "request", "matched", "µs/decision"]]
    let clock = ContinuousClock()
    var checksum = 0
    for count in [10, 1_000, 100_000] {
        let set = generatedPolicies(rules: count)
        let requests = [
            (
                "matching",
                PolicyRequest(
                    action: .read, service: "com.example.svc-\(count - 1).token", account: "me", accessGroup: "g")
            ),
            (
                "non-matching",
                PolicyRequest(action: .read, service: "unrelated.service", account: "me", accessGroup: "g")
            ),
        ]
        for (name, request) in requests {
            let elapsed = clock.measure {
                for _ in 0..<iterations { checksum &+= set.decide(request).matchedRules.count }
            }
            let micro =
                (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
                / Double(iterations)
            rows.append(["\(count)", name, "\(set.decide(request).matchedRules.count)", format(micro, digits: 2)])
        }
    }
    if checksum == -1 { print(checksum) }
    return rows
}
