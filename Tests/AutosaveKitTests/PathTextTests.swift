import Testing

@testable import AutosaveKit

/// Path arithmetic as NSString's did it, for the paths the agent and the CLI handle.
@Suite struct PathTextTests {
    @Test func parentsAndLastComponents() {
        #expect(PathText.parent(of: "/a/b") == "/a")
        #expect(PathText.parent(of: "/a") == "/")
        #expect(PathText.parent(of: "a") == "")
        #expect(PathText.parent(of: "/a/b/") == "/a")
        #expect(PathText.lastComponent(of: "/a/b.txt") == "b.txt")
        #expect(PathText.lastComponent(of: "b.txt") == "b.txt")
        #expect(PathText.lastComponent(of: "/") == "")
    }

    @Test func normalizingIsLexical() {
        #expect(PathText.normalized("/root/./project//.autosave") == "/root/project/.autosave")
        #expect(PathText.normalized("/root/project/../other") == "/root/other")
        #expect(PathText.normalized("/..") == "/")
        #expect(PathText.normalized("/a/b/") == "/a/b")
    }
}
