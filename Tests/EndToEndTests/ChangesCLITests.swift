import EPFGenerator
import EPFTestSupport
import Foundation
import Testing

/// `epf changes` and the removed-id message of `epf lookup`, through the built binary: two weekly fulls of the
/// generator, imported one after the other.
@Suite struct ChangesCLITests {
    static func model() -> FeedModel {
        var options = GeneratorOptions()
        options.apps = 1000
        options.seed = 11
        return FeedModel(options)
    }

    @Test func changesAndRemovedLookupsEndToEnd() throws {
        let work = try WorkDirectory()
        let model = Self.model()
        let common = ["--apps", "1000", "--seed", "11", "--only", "application"]
        #expect(try runEPF(["generate", "full0"] + common, in: work.path).status == 0)
        #expect(try runEPF(["generate", "full1", "--week", "1"] + common, in: work.path).status == 0)
        #expect(try runEPF(["import", "full0", "--db", "epf.sqlite"], in: work.path).status == 0)
        // Before any second full: nothing has changed.
        let empty = try runEPF(["changes", "--since", "2026-01-01", "--csv", "--db", "epf.sqlite"], in: work.path)
        #expect(empty.status == 0 && empty.stdout == "export_date,change,kind,id\r\n")
        #expect(try runEPF(["import", "full1", "--db", "epf.sqlite"], in: work.path).status == 0)

        let expected = model.fullChanges(week: 1)
        #expect(!expected.removed.isEmpty)
        let csv = try runEPF(["changes", "--since", "2026-01-12", "--kind", "app", "--csv", "--db", "epf.sqlite"],
                             in: work.path)
        #expect(csv.status == 0, "\(csv.stderr)")
        var lines = csv.stdout.components(separatedBy: "\r\n")
        #expect(lines.removeFirst() == "export_date,change,kind,id")
        #expect(lines.removeLast() == "")
        var recorded: [String: Set<Int64>] = [:]
        for line in lines {
            let fields = line.split(separator: ",").map(String.init)
            #expect(fields.count == 4 && fields[0] == "2026-01-12" && fields[2] == "app", "\(line)")
            if fields.count == 4, let id = Int64(fields[3]) { recorded[fields[1], default: []].insert(id) }
        }
        #expect(recorded == ["removed": expected.removed, "added": expected.added])

        let json = try runEPF(["changes", "--since", "2026-01-12", "--json", "--db", "epf.sqlite"], in: work.path)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == expected.removed.count + expected.added.count)
        let table = try runEPF(["changes", "--since", "2026-01-12", "--db", "epf.sqlite"], in: work.path)
        #expect(table.stdout.hasPrefix("EXPORT"))
        #expect(table.stdout.split(separator: "\n").count == array.count + 1)
        // Later than every export: an empty list, not an error.
        let later = try runEPF(["changes", "--since", "2026-01-13", "--json", "--db", "epf.sqlite"], in: work.path)
        #expect(later.status == 0 && later.stdout == "[]\n")

        let removed = try #require(expected.removed.min())
        let kept = model.appID(0)
        let lookup = try runEPF(["lookup", String(kept), String(removed), "--db", "epf.sqlite"], in: work.path)
        #expect(lookup.status == 1)
        #expect(lookup.stderr.contains("\(removed): removed from the store in the export of 2026-01-12"),
                "\(lookup.stderr)")
        #expect(!lookup.stderr.contains("not found"))
        #expect(lookup.stdout.contains("Café Olé Lite"))
        let unknown = try runEPF(["lookup", "12", "--db", "epf.sqlite"], in: work.path)
        #expect(unknown.status == 1 && unknown.stderr.contains("not found: 12"))
    }

    @Test(arguments: [
        ["changes"], ["changes", "--since", "yesterday"], ["changes", "--since", "2026-01-01", "--kind", "podcast"],
        ["changes", "--since", "2026-01-01", "--csv", "--json"], ["changes", "--since", "2026-01-01", "extra"],
    ])
    func badArgumentsAreUsageErrors(arguments: [String]) throws {
        let work = try WorkDirectory()
        let result = try runEPF(arguments + ["--db", "missing.sqlite"], in: work.path)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("epf changes: "))
    }
}
