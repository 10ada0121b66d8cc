import Keygate
import KeygatePolicy
import KeygateStore
import KeygateTesting
import Testing

@testable import KeygateCLI

/// Issue 10 point 2: `list` lays each item's JSON object out by hand; it is the same text as
/// the object built as a tree of JSON values and rendered, for every kind of attribute.
@Suite struct ItemJSONTests {
    @Test func theHandLaidLineIsTheRenderedTree() async throws {
        let cli = try InProcessCLI()
        cli.authenticator.setDefault(.succeed, for: .biometry)
        cli.authenticator.setDefault(.succeed, for: .passcode)
        let adds: [[String]] = [
            ["-s", "api", "-a", "me"],
            ["-s", "caf\u{E9} \"q\" \\ \u{1F600}", "-a", "tab\there", "--label", "L\nnext"],
            [
                "-s", "bio", "-a", "me", "--access-control", "devicePasscode", "--accessible",
                "whenUnlockedThisDeviceOnly",
            ],
            ["-s", "either", "-a", "me", "--label", "", "--access-control", "devicePasscode,applicationPassword,or"],
        ]
        for words in adds {
            let added = await cli.run(["add"] + words, stdin: [1])
            #expect(added.status == .success, "\(words): \(added.stderr)")
        }
        let keychain = Keychain(
            store: cli.store, accessGroups: Session.groups(for: Session.defaultGroup),
            authenticator: cli.authenticator, device: cli.device)
        var query = ItemQuery(accessGroup: Session.defaultGroup, synchronizable: .any, returnAttributes: true)
        query.matchLimit = .all
        let found = try await keychain.copyMatching(query).compactMap(\.attributes)
        #expect(found.count == adds.count)
        for attributes in found {
            #expect(ItemJSON.render(attributes) == ItemJSONWriterTests.reference(attributes, asciiOnly: false))
        }
        #expect(found.contains { ItemJSON.render($0).contains(#""accessControl": null"#) })
        #expect(found.contains { ItemJSON.render($0).contains(#""label": null"#) })
    }
}
