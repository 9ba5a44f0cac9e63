import EPFTestSupport
import Foundation
import Testing

/// `scripts/package` builds the Debian package from the release binary: its name, version, dependencies and
/// contents. (Installing it, the units and the served database are checked by `scripts/check-package`, which
/// needs root and a throwaway machine: CI runs it.)
@Suite struct DebianPackageTests {
    static let releaseBinary = BuiltEPF.packageRoot.appendingPathComponent(".build/release/epf").path

    /// Whether the release binary exists with the Swift runtime linked in (what a package can ship), and the tools
    /// scripts/package needs are installed.
    static let canPackage: Bool = {
        let tools = ["/usr/bin/dpkg-deb", "/usr/bin/dpkg-shlibdeps", "/usr/bin/objdump", "/usr/bin/strip"]
        guard FileManager.default.isExecutableFile(atPath: releaseBinary),
              tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }),
              let headers = try? ToolRun.run("/usr/bin/objdump", ["-p", releaseBinary]), headers.status == 0
        else { return false }
        return !headers.stdout.contains("libswiftCore")
    }()

    static func field(_ deb: String, _ name: String) throws -> String {
        (try ToolRun.run("/usr/bin/dpkg-deb", ["-f", deb, name])?.stdout ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: canPackage, "needs .build/release/epf built with --static-swift-stdlib (scripts/package builds it; .ci/run runs it before the tests) and dpkg-dev, binutils (scripts/prerequisites --package)"))
    func scriptsPackageBuildsADebOfTheBinaryPagesCompletionsAndUnits() throws {
        let work = try WorkDirectory(prefix: "epf-package")
        let script = BuiltEPF.packageRoot.appendingPathComponent("scripts/package").path
        let built = try ToolRun.run(script, ["--binary", Self.releaseBinary, "--output", work.path, "--fast"])
        #expect(built?.status == 0, "\(built?.stderr ?? "")")
        let deb = (built?.stdout ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(FileManager.default.fileExists(atPath: deb))

        let upstream = (try ToolRun.run(Self.releaseBinary, ["--version"])?.stdout ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "epf ", with: "")
        let version = try Self.field(deb, "Version")
        #expect(version.hasPrefix(upstream + "+git"), "version \(version), epf --version \(upstream)")
        let architecture = try Self.field(deb, "Architecture")
        #expect(deb.hasSuffix("/epf_\(version)_\(architecture).deb"))
        #expect(try Self.field(deb, "Package") == "epf")

        // What the binary links is a dependency; what it opens with dlopen at first use is recommended.
        let depends = try Self.field(deb, "Depends")
        for package in ["libsqlite3-0", "zlib1g", "libbz2-1.0", "libstdc++6", "adduser"] {
            #expect(depends.contains(package), "Depends: \(depends)")
        }
        #expect(!depends.contains("libcurl") && !depends.contains("libpq"), "Depends: \(depends)")
        let recommends = try Self.field(deb, "Recommends")
        #expect(recommends.contains("libcurl") && recommends.contains("libpq"), "Recommends: \(recommends)")

        let listing = try ToolRun.run("/usr/bin/dpkg-deb", ["-c", deb])?.stdout ?? ""
        var expected = ["./usr/bin/epf", "./usr/share/man/man1/epf.1.gz", "./usr/share/man/man1/epf-serve.1.gz",
                        "./usr/share/man/man1/epf-sync.1.gz", "./usr/share/bash-completion/completions/epf",
                        "./usr/share/zsh/vendor-completions/_epf", "./lib/systemd/system/epf-serve.service",
                        "./lib/systemd/system/epf-sync.service", "./lib/systemd/system/epf-sync.timer",
                        "./etc/default/epf", "./usr/share/doc/epf/copyright", "./usr/share/doc/epf/changelog.gz",
                        "./usr/share/lintian/overrides/epf"]
        expected = expected.filter { !listing.contains(" \($0)\n") }
        #expect(expected.isEmpty, "missing from the package: \(expected)")
        let notRoot = listing.split(separator: "\n").filter { !$0.contains(" root/root ") }
        #expect(notRoot.isEmpty, "files not owned by root: \(notRoot)")

        let extracted = work.file("control")
        #expect(try ToolRun.run("/usr/bin/dpkg-deb", ["-e", deb, extracted])?.status == 0)
        let conffiles = try String(contentsOfFile: extracted + "/conffiles", encoding: .utf8)
        #expect(conffiles == "/etc/default/epf\n")
        for script in ["postinst", "prerm", "postrm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: extracted + "/" + script)
            #expect((attributes[.posixPermissions] as? Int) == 0o755, "\(script) is not executable")
        }
        let postinst = try String(contentsOfFile: extracted + "/postinst", encoding: .utf8)
        let commands = postinst.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
        #expect(commands.contains { $0.contains("adduser --system") })
        #expect(!commands.contains { $0.contains("enable") || $0.contains("start") }, "the postinst enables nothing")
    }
}
