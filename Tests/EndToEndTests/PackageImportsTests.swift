import EPFTestSupport
import Foundation
import Testing

/// Package.swift says what each module uses: every `import` of one of the package's own modules (a target or a
/// system library of Package.swift) in a target's files is among the dependencies that target declares, and each
/// declared dependency is imported somewhere in the target. A module reached only through another one's
/// dependencies compiles by accident, and the graph Package.swift draws would not be the code's. README.md's
/// layout section draws the same graph.
@Suite("Package.swift declares every import")
struct PackageImportsTests {
    /// One target of Package.swift: its name, its directory and the directories it excludes, its dependencies.
    struct Target {
        var name: String
        var path: String
        var excluded: [String]
        var dependencies: Set<String>
    }

    /// The targets of Package.swift, read from its text: each `.target(`, `.executableTarget(`, `.testTarget(` or
    /// `.systemLibrary(` call up to the next one, with its `name:`, `dependencies: [...]`, `path:` and
    /// `exclude: [...]`. Fails the test when a call has no name.
    static func targets(manifest: String) -> [Target] {
        let calls = manifest.ranges(of: /\.(?:target|executableTarget|testTarget|systemLibrary)\(/)
        var targets: [Target] = []
        for (index, call) in calls.enumerated() {
            let end = index + 1 < calls.count ? calls[index + 1].lowerBound : manifest.endIndex
            let text = manifest[call.lowerBound..<end]
            guard let name = text.firstMatch(of: /name:\s*"([^"]+)"/)?.1 else {
                Issue.record("Package.swift: a target without a name: \(text.prefix(80))")
                continue
            }
            func strings(after label: String) -> [String] {
                guard let range = text.range(of: label + ": ["),
                      let close = text[range.upperBound...].firstIndex(of: "]") else { return [] }
                return text[range.upperBound..<close].matches(of: /"([^"]+)"/).map { String($0.1) }
            }
            let isTest = text.hasPrefix(".testTarget(")
            let path = text.firstMatch(of: /path:\s*"([^"]+)"/).map { String($0.1) }
                ?? (isTest ? "Tests/" : "Sources/") + name
            targets.append(Target(name: String(name), path: path,
                                  excluded: strings(after: "exclude").map { path + "/" + $0 },
                                  dependencies: Set(strings(after: "dependencies"))))
        }
        return targets
    }

    /// The modules a Swift file imports (`import X`, `@testable import X`, `import struct X.Y`), with their lines.
    static func imports(in text: String) -> [(module: String, line: Int)] {
        var found: [(module: String, line: Int)] = []
        let kinds: Set<Substring> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]
        // Words, not a Regex: a Regex per line of every file took seconds of CPU.
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
            while words.first?.hasPrefix("@") == true { words = words.dropFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            words = words.dropFirst()
            if words.count >= 2, let kind = words.first, kinds.contains(kind) { words = words.dropFirst() }
            guard let name = words.first?.split(separator: ".").first else { continue }
            found.append((String(name), number + 1))
        }
        return found
    }

    @Test func everyImportOfAPackageModuleIsADeclaredDependency() throws {
        let root = EPFBinary.packageRoot
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = Self.targets(manifest: manifest)
        #expect(targets.count >= 30, "read \(targets.count) targets of Package.swift")
        let modules = Set(targets.map(\.name))
        let manager = FileManager.default
        var checked = 0
        var undeclared: [String] = []
        var unused: [String] = []
        for target in targets {
            var imported = Set<String>()
            let directory = root.appendingPathComponent(target.path).path
            #expect(manager.fileExists(atPath: directory), "\(target.name)'s directory \(target.path) is missing")
            let enumerator = manager.enumerator(atPath: directory)
            while let relative = enumerator?.nextObject() as? String {
                let path = target.path + "/" + relative
                guard path.hasSuffix(".swift"),
                      !target.excluded.contains(where: { path.hasPrefix($0 + "/") }) else { continue }
                let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
                for (module, line) in Self.imports(in: text) where modules.contains(module) && module != target.name {
                    checked += 1
                    imported.insert(module)
                    if !target.dependencies.contains(module) {
                        undeclared.append("\(path):\(line) imports \(module), which target \(target.name) "
                                          + "does not declare")
                    }
                }
            }
            for module in target.dependencies.subtracting(imported).sorted() {
                unused.append("target \(target.name) declares \(module), which none of its files imports")
            }
        }
        #expect(checked >= 200, "checked \(checked) imports")
        #expect(undeclared.isEmpty, "imports Package.swift does not declare:\n\(undeclared.joined(separator: "\n"))")
        #expect(unused.isEmpty, "dependencies no file uses:\n\(unused.joined(separator: "\n"))")
    }

    /// The module graph in README.md's "How the code is laid out" (its first code block: `Module -> A, B`, a line
    /// beginning with spaces continuing the list), as module -> dependencies.
    static func readmeGraph(_ readme: String) -> [String: Set<String>] {
        guard let section = readme.range(of: "## How the code is laid out"),
              let open = readme[section.upperBound...].range(of: "```\n"),
              let close = readme[open.upperBound...].range(of: "```") else { return [:] }
        var graph: [String: Set<String>] = [:]
        var current: String?
        for line in readme[open.upperBound..<close.lowerBound].split(separator: "\n") {
            let list: Substring
            if line.first == " " {
                list = line
            } else {
                let parts = line.split(separator: "->", maxSplits: 1)
                let name = String(parts[0].trimmingCharacters(in: .whitespaces))
                current = name
                graph[name, default: []] = []
                list = parts.count > 1 ? parts[1] : ""
            }
            guard let current else { continue }
            for module in list.split(separator: ",") {
                let trimmed = module.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { graph[current, default: []].insert(trimmed) }
            }
        }
        return graph
    }

    @Test func readmeDrawsTheModuleGraphOfPackageSwift() throws {
        let root = EPFBinary.packageRoot
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var package: [String: Set<String>] = [:]
        for target in Self.targets(manifest: manifest) where target.path.hasPrefix("Sources/") {
            package[target.name] = target.dependencies
        }
        let drawn = Self.readmeGraph(readme)
        #expect(package.count >= 15, "read \(package.count) modules of Package.swift")
        func text(_ modules: Set<String>?) -> String {
            guard let modules else { return "(absent)" }
            return modules.isEmpty ? "(none)" : modules.sorted().joined(separator: ", ")
        }
        for name in Set(package.keys).union(drawn.keys).sorted() {
            #expect(drawn[name] == package[name],
                    "README.md's module graph: \(name) -> \(text(drawn[name])); Package.swift: \(text(package[name]))")
        }
    }

    /// The reading above, on a manifest of its own: defaults, explicit paths, exclusions, attributes on imports.
    @Test func theManifestAndImportsAreReadAsSwiftPMReadsThem() {
        let manifest = """
            .target(name: "A", dependencies: ["B", "CLib"], exclude: ["Sub"]),
            .target(name: "B", dependencies: ["C"],
                    path: "Sources/A/Sub"),
            .systemLibrary(name: "CLib", path: "Sources/CLib"),
            .testTarget(name: "ATests", dependencies: ["A"]),
            """
        let targets = Self.targets(manifest: manifest)
        #expect(targets.map(\.name) == ["A", "B", "CLib", "ATests"])
        #expect(targets.map(\.path) == ["Sources/A", "Sources/A/Sub", "Sources/CLib", "Tests/ATests"])
        #expect(targets[0].excluded == ["Sources/A/Sub"])
        #expect(targets[0].dependencies == ["B", "CLib"] && targets[1].dependencies == ["C"])
        let text = "import A\n@testable import B\n  import struct C.D\n// import E\nlet importer = 1\n"
            + "@_exported import F\n"
        #expect(Self.imports(in: text).map(\.module) == ["A", "B", "C", "F"])
        #expect(Self.imports(in: text).map(\.line) == [1, 2, 3, 6])
    }
}
