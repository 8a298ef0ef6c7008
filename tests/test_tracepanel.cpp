// The trace panel as an incident reviewer reads it: the cause of a refusal
// first, in a sentence, with the environment named; the lease that merely
// held the environment is not passed off as the winner of a supersession;
// and a job URL no browser can open is copied to the clipboard with a note.

#include "tracepanel.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QTextBrowser>
#include <QtTest>

using namespace relctl;
using relctl::ui::TracePanel;

namespace {

// Times in these tests are epoch milliseconds, as the console's functions send them.
relctl::Timestamp ms(std::int64_t n)
{
    return relctl::Timestamp::fromMillis(n);
}

// job-2, queued on web, skipped for job-3 after alice approved it, while
// job-1 held the lease.
RefusalTrace supersededAfterApproval()
{
    RefusalTrace t;
    t.event.id = 41;
    t.event.at = ms(1'700'000'000'000);
    t.event.env = "web";
    t.event.operation = "acquire";
    t.event.outcome = "rejected";
    t.event.reason = "SUPERSEDED";
    t.event.job = "job-2";
    t.event.release = "r2";
    t.event.generation = 2;
    t.event.jobUrl = "https://ci.example/jobs/2";
    LeaseSpan holder;
    holder.env = "web";
    holder.token = 1;
    holder.job = "job-1";
    holder.release = "r1";
    holder.generation = 1;
    holder.ending = "live";
    t.supersededBy = holder;
    TraceCause c;
    c.kind = "superseded";
    c.summary = "skipped for job-3 (r3, generation 3), which approval #2 by alice let go first: hotfix first";
    c.job = "job-3";
    c.release = "r3";
    c.generation = 3;
    c.approval = 2;
    c.by = "alice";
    c.reason = "hotfix first";
    c.at = ms(1'699'999'990'000);
    t.cause = c;
    return t;
}

} // namespace

class TestTracePanel final : public QObject
{
    Q_OBJECT

private slots:
    void theCauseComesFirstAndNamesTheWinner()
    {
        TracePanel panel;
        panel.showTrace(supersededAfterApproval());
        const QString text = panel.text();
        QVERIFY2(text.contains(QStringLiteral("acquire on web refused: SUPERSEDED")), qPrintable(text));
        QVERIFY2(
            text.contains(QStringLiteral("Why: Skipped for job-3 (r3, generation 3), which approval #2 by "
                                         "alice let go first: hotfix first.")),
            qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("decided by alice")));
        // The cause precedes the job's own details.
        QVERIFY(text.indexOf(QStringLiteral("Why:")) < text.indexOf(QStringLiteral("Its lease")));
        // job-1 only held the lease: it is not shown as what beat job-2.
        QVERIFY2(!text.contains(QStringLiteral("job-1")), qPrintable(text));
    }

    void theHolderIsShownForOtherRefusals()
    {
        RefusalTrace t = supersededAfterApproval();
        t.event.reason = "STALE_GENERATION";
        t.cause->kind = "stale";
        t.cause->summary =
            "generation 2 is not newer than generation 3 (r3), published by job-3 with token 4";
        TracePanel panel;
        panel.showTrace(t);
        QVERIFY(panel.text().contains(QStringLiteral("Holding web at that moment: job job-1")));
    }

    void aLinkNoBrowserOpensIsCopied()
    {
        TracePanel panel;
        panel.showTrace(supersededAfterApproval());
        QList<QUrl> opened;
        panel.setUrlOpener([&](const QUrl& url) {
            opened << url;
            return true;
        });
        const QUrl url(QStringLiteral("https://ci.example/jobs/2"));
        panel.openLink(url);
        QCOMPARE(opened, QList<QUrl>{url});
        QVERIFY(panel.notice().isEmpty());

        QGuiApplication::clipboard()->clear();
        panel.setUrlOpener([](const QUrl&) { return false; });
        panel.openLink(url);
        QCOMPARE(QGuiApplication::clipboard()->text(), url.toString());
        QVERIFY2(panel.notice().contains(QStringLiteral("copied to the clipboard")),
                 qPrintable(panel.notice()));
        // A new trace clears the note.
        panel.showTrace(supersededAfterApproval());
        QVERIFY(panel.notice().isEmpty());
    }

    void clickingTheLinkInThePanelOpensIt()
    {
        TracePanel panel;
        panel.showTrace(supersededAfterApproval());
        QList<QUrl> opened;
        panel.setUrlOpener([&](const QUrl& url) {
            opened << url;
            return false;
        });
        auto* browser = panel.findChild<QTextBrowser*>();
        QVERIFY(browser);
        emit browser->anchorClicked(QUrl(QStringLiteral("https://ci.example/jobs/2")));
        QCOMPARE(opened.size(), 1);
        QVERIFY(!panel.notice().isEmpty());
    }
};

QTEST_MAIN(TestTracePanel)
#include "test_tracepanel.moc"
