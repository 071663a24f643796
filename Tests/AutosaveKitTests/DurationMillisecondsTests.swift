import AutosaveKit
import Testing

/// What the log's `next` texts, `ms=` fields and `pendingSaveInMilliseconds` show for a duration.
@Suite struct DurationMillisecondsTests {
    @Test func wholeMillisecondsRoundTowardZero() {
        #expect(Duration.milliseconds(1500).wholeMilliseconds == 1500)
        #expect(Duration.microseconds(2999).wholeMilliseconds == 2)
        #expect(Duration.seconds(3_600).wholeMilliseconds == 3_600_000)
        #expect(Duration.microseconds(-1500).wholeMilliseconds == -1, "a deadline just passed")
    }

    @Test func millisecondsKeepTheirFraction() {
        #expect(Duration.microseconds(1250).milliseconds == 1.25)
        #expect(Duration.seconds(2).milliseconds == 2000)
    }
}
