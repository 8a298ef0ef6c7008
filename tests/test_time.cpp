// relctl::Timestamp, the one form of the server's time: it reads both forms
// the server sends (ISO text from the replies, epoch milliseconds from the
// console's functions) and writes ISO text as PostgreSQL's JSON does, so a
// reply read and written back is unchanged (the server's side of that is
// test_replies' timestampsAreWrittenAsTheServerWritesThem).

#include "relctl/time.h"

#include <QtTest>
#include <nlohmann/json.hpp>

using relctl::Timestamp;

namespace {

std::int64_t micros(std::string_view text)
{
    const auto t = Timestamp::parse(text);
    if (!t)
        qFatal("not read: %.*s", static_cast<int>(text.size()), text.data());
    return t->micros();
}

} // namespace

class TestTime final : public QObject
{
    Q_OBJECT

private slots:
    void readsTheServersForms()
    {
        QCOMPARE(micros("1970-01-01T00:00:00+00:00"), 0);
        QCOMPARE(micros("1970-01-01 00:00:00+00"), 0);
        QCOMPARE(micros("1970-01-01T00:00:00Z"), 0);
        QCOMPARE(micros("2023-11-14T22:13:20+00:00"), 1'700'000'000'000'000);
        QCOMPARE(micros("2023-11-14T22:13:20.5+00:00"), 1'700'000'000'500'000);
        QCOMPARE(micros("2023-11-14T22:13:20.000001+00:00"), 1'700'000'000'000'001);
        // An offset is applied: the same instant in another zone.
        QCOMPARE(micros("2023-11-15T00:13:20+02:00"), 1'700'000'000'000'000);
        QCOMPARE(micros("2023-11-14T17:43:20-04:30"), 1'700'000'000'000'000);
        QCOMPARE(micros("2023-11-14T22:13:20+00:00:00"), 1'700'000'000'000'000);
        // Leap days, and before the epoch.
        QCOMPARE(micros("2024-02-29T00:00:00+00:00"), 1'709'164'800'000'000);
        QCOMPARE(micros("1969-12-31T23:59:59.999999+00:00"), -1);
    }

    void refusesWhatIsNotOne()
    {
        for (const char* bad :
             {"", "2024-01-01", "2024-01-01T10:00:00", "2024-02-30T00:00:00+00", "2023-02-29T00:00:00+00",
              "2024-13-01T00:00:00+00", "2024-01-01T24:00:00+00", "2024-01-01T10:00:00.+00",
              "2024-01-01T10:00:00.1234567+00", "2024-01-01T10:00:00+0", "2024-01-01T10:00:00+00:00 ",
              "24-01-01T10:00:00+00", "2024-01-01X10:00:00+00", "1700000000000"})
            QVERIFY2(!Timestamp::parse(bad), bad);
    }

    void writesAsPostgresJsonDoes()
    {
        QCOMPARE(Timestamp::fromMicros(0).iso(), std::string("1970-01-01T00:00:00+00:00"));
        // Trailing zeros of the fraction go, and a whole second has none.
        QCOMPARE(Timestamp::fromMillis(1'700'000'000'500).iso(), std::string("2023-11-14T22:13:20.5+00:00"));
        QCOMPARE(Timestamp::fromMicros(1'700'000'000'000'010).iso(),
                 std::string("2023-11-14T22:13:20.00001+00:00"));
        QCOMPARE(Timestamp::fromMicros(-1).iso(), std::string("1969-12-31T23:59:59.999999+00:00"));
        QCOMPARE(Timestamp::fromMicros(1'709'164'800'000'000).iso(),
                 std::string("2024-02-29T00:00:00+00:00"));
        for (const char* text : {"2026-11-30T23:53:43.123456+00:00", "2000-03-01T00:00:00+00:00",
                                 "1999-12-31T23:59:59.9+00:00", "2100-02-28T12:00:00.01+00:00"})
            QCOMPARE(Timestamp::parse(text)->iso(), std::string(text));
    }

    void millisecondsRoundDown()
    {
        QCOMPARE(Timestamp::fromMicros(1999).millis(), 1);
        QCOMPARE(Timestamp::fromMicros(-1).millis(), -1);
        QCOMPARE(Timestamp::fromMicros(-1000).millis(), -1);
        QCOMPARE(Timestamp::fromMicros(-1001).millis(), -2);
        QCOMPARE(Timestamp::fromMillis(-5).millis(), -5);
    }

    void ordersAndMeasures()
    {
        const Timestamp a = Timestamp::fromMillis(1000);
        const Timestamp b = Timestamp::fromMillis(2500);
        QVERIFY(a < b && b > a && a != b && a == Timestamp::fromMicros(1'000'000));
        QCOMPARE((b - a).count(), 1'500'000);
        QCOMPARE(a + std::chrono::milliseconds(1500), b);
        QCOMPARE(b - std::chrono::milliseconds(1500), a);
    }

    void readsJsonInBothForms()
    {
        using nlohmann::json;
        QCOMPARE(json(1'700'000'000'000).get<Timestamp>(), Timestamp::fromMillis(1'700'000'000'000));
        QCOMPARE(json("2023-11-14T22:13:20+00:00").get<Timestamp>(),
                 Timestamp::fromMillis(1'700'000'000'000));
        QCOMPARE(json(Timestamp::fromMillis(1'700'000'000'000)).dump(),
                 std::string("\"2023-11-14T22:13:20+00:00\""));
        QVERIFY_THROWS_EXCEPTION(json::type_error, (void)json("yesterday").get<Timestamp>());
        QVERIFY_THROWS_EXCEPTION(json::type_error, (void)json(1.5).get<Timestamp>());
        QVERIFY_THROWS_EXCEPTION(json::type_error, (void)json(true).get<Timestamp>());
        // Milliseconds that microseconds cannot hold are refused, not wrapped.
        QVERIFY_THROWS_EXCEPTION(json::type_error,
                                 (void)json(std::numeric_limits<std::int64_t>::max()).get<Timestamp>());
        QVERIFY_THROWS_EXCEPTION(json::type_error,
                                 (void)json(std::numeric_limits<std::int64_t>::min()).get<Timestamp>());
        QVERIFY_THROWS_EXCEPTION(json::type_error,
                                 (void)json(std::numeric_limits<std::uint64_t>::max()).get<Timestamp>());
        QCOMPARE(json(std::numeric_limits<std::int64_t>::max() / 1000).get<Timestamp>().millis(),
                 std::numeric_limits<std::int64_t>::max() / 1000);
    }
};

QTEST_APPLESS_MAIN(TestTime)
#include "test_time.moc"
