@testable import AutosaveControl
import AutosaveKit
import Testing

/// Which clients the control socket serves when descriptors are short, and when a spell of
/// refusals is logged: once as it starts, once as it ends, however many clients come between.
@Suite struct ClientAdmissionTests {
    let start = ContinuousClock.now

    @Test func clientsBeyondTheShareAreRefusedAndTheSpellIsLoggedOnceEachWay() {
        var state = AdmissionState()
        for _ in 0..<3 {
            guard case .admitted(nil) = state.admit(within: 3, at: start) else { Issue.record("a client within the share was refused"); return }
        }
        guard case .refused(connected: 3, isFirst: true) = state.admit(within: 3, at: start) else {
            Issue.record("the first client over the share did not start a spell")
            return
        }
        for second in 1...5 {
            guard case .refused(_, isFirst: false) = state.admit(within: 3, at: start + .seconds(second)) else {
                Issue.record("a later refusal started another spell")
                return
            }
        }
        state.connected -= 1
        // Served, but within a second of the last refusal: the spell goes on.
        guard case .admitted(nil) = state.admit(within: 3, at: start + .milliseconds(5_500)) else {
            Issue.record("a client served half a second after a refusal ended the spell")
            return
        }
        state.connected -= 1
        guard case .admitted(let ended?) = state.admit(within: 3, at: start + .seconds(7)) else {
            Issue.record("a client served two seconds after the last refusal did not end the spell")
            return
        }
        #expect(ended.refused == 6)
        #expect(ended.since == start)
    }

    @Test func refusalsOfAFailedAcceptJoinTheSpellUnderWay() {
        var state = AdmissionState()
        guard case .refused(connected: 0, isFirst: true) = state.refuse(17, at: start) else {
            Issue.record("a failed accept did not start a spell")
            return
        }
        guard case .refused(_, isFirst: false) = state.refuse(3, at: start + .milliseconds(100)) else {
            Issue.record("a second failed accept started another spell")
            return
        }
        guard case .admitted(let ended?) = state.admit(within: 10, at: start + .seconds(2)) else {
            Issue.record("the first client served after descriptors came back did not end the spell")
            return
        }
        #expect(ended.refused == 20)
    }

    @Test func theClientShareIsAQuarterOfTheDescriptorsFreeAndBlockingCallsLeaveTheRest() {
        let tight = DescriptorBudget(limit: 64, inUse: 22)
        #expect(tight.clients == 10)
        #expect(tight.blockingCalls == 2)
        let usual = DescriptorBudget(limit: 1024, inUse: 24)
        #expect(usual.clients == 250)
        #expect(usual.blockingCalls == 62)
        let exhausted = DescriptorBudget(limit: 16, inUse: 40)
        #expect(exhausted.clients == 1 && exhausted.blockingCalls == 1)
    }
}
