// The console's window over an organisation, on the fake backend: it opens on
// "Needs attention" above 50 environments (not at 50), the search narrows the
// environments and the timeline's lanes together, groups collapse in step on
// both, and a group frozen at once reaches the backend as one FreezeMany.

#include "bulkfreezedialog.h"
#include "environmentsview.h"
#include "fakeconsole.h"
#include "timelinewidget.h"

#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>
#include <QtTest>

using namespace relctl::ui;

namespace {

std::vector<relctl::EnvironmentRow> services(int count)
{
    // count environments: svcN.prod and svcN.test, in natural order.
    std::vector<relctl::EnvironmentRow> rows;
    for (int i = 1; int(rows.size()) < count; ++i)
        for (const char* stage : {"prod", "test"}) {
            if (int(rows.size()) == count)
                break;
            relctl::EnvironmentRow row;
            row.name = "svc" + std::to_string(i) + "." + stage;
            row.group = "svc" + std::to_string(i);
            row.policy = "newest";
            row.supersede = "approval";
            row.serialization = "enforced";
            rows.push_back(row);
        }
    return rows;
}

struct Console : FakeConsole
{
    explicit Console(int environments)
    {
        auto rows = services(environments);
        relctl::TimelineSlice slice;
        for (const auto& row : rows)
            slice.environments.push_back(row.name);
        fake->setEnvironments(std::move(rows));
        fake->setTimeline(slice);
        ConnectionState state;
        state.connected = true;
        state.schemaVersion = 16;
        fake->setConnectionState(state);
        start();
    }

    // The timeline's lanes shown (not their group headers).
    QStringList lanes() const
    {
        QStringList shown;
        const TimelineRows& rows = window.timeline()->timelineRows();
        for (int r = 0; r < rows.count(); ++r) {
            const QString identity = rows.identity(r, window.timeline()->timelineLanes());
            if (identity.startsWith(QLatin1String("lane:")))
                shown << identity.mid(5);
        }
        return shown;
    }
};

} // namespace

class TestOrganisationConsole final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void opensOnNeedsAttentionAboveFifty_data()
    {
        QTest::addColumn<int>("environments");
        QTest::addColumn<bool>("attention");
        QTest::addRow("50") << 50 << false;
        QTest::addRow("51") << 51 << true;
    }

    void opensOnNeedsAttentionAboveFifty()
    {
        QFETCH(int, environments);
        QFETCH(bool, attention);
        Console c(environments);
        QTRY_COMPARE(c.session.environments()->rowCount(), environments);
        EnvironmentsView* view = c.window.environmentsView();
        QCOMPARE(view->mode() == EnvironmentsView::Mode::Attention, attention);
        // The person's choice wins from then on, through later reads too.
        view->allAction()->trigger();
        QCOMPARE(view->mode(), EnvironmentsView::Mode::All);
        c.session.reload();
        QTRY_COMPARE(c.fake->requestCount(RequestKind::Environments), 2);
        QTest::qWait(50);
        QCOMPARE(view->mode(), EnvironmentsView::Mode::All);
    }

    // The search narrows the environments and the timeline's lanes alike;
    // collapsing a group in one collapses it in the other.
    void theSearchAndGroupsAreTheTimelines()
    {
        Console c(12);
        QTRY_COMPARE(c.session.environments()->rowCount(), 12);
        EnvironmentsView* view = c.window.environmentsView();
        QTRY_COMPARE(c.lanes().size(), 12);
        view->searchBox()->setText(QStringLiteral("svc1*"));
        QCOMPARE(view->tree()->shownEnvironments(),
                 (QStringList{QStringLiteral("svc1.prod"), QStringLiteral("svc1.test")}));
        QCOMPARE(c.lanes(), (QStringList{QStringLiteral("svc1.prod"), QStringLiteral("svc1.test")}));
        view->searchBox()->clear();
        QCOMPARE(c.lanes().size(), 12);

        view->table()->collapse(view->tree()->indexOfGroup(QStringLiteral("svc2")));
        QVERIFY(c.window.timeline()->collapsedGroups().contains(QStringLiteral("svc2")));
        c.window.timeline()->toggleGroup(QStringLiteral("svc3"));
        QVERIFY(view->collapsedGroups().contains(QStringLiteral("svc3")));
        QVERIFY(!view->table()->isExpanded(view->tree()->indexOfGroup(QStringLiteral("svc3"))));
    }

    // Freeze many on a group: one FreezeMany with its environments reaches
    // the backend.
    void freezingAGroupSendsOneFreezeMany()
    {
        Console c(6);
        QTRY_COMPARE(c.session.environments()->rowCount(), 6);
        EnvironmentsView* view = c.window.environmentsView();
        QTRY_VERIFY(c.session.connection().connected);
        QVERIFY(view->selectGroup(QStringLiteral("svc2")));
        QTimer::singleShot(0, [] {
            for (QWidget* w : QApplication::topLevelWidgets())
                if (auto* dialog = qobject_cast<BulkFreezeDialog*>(w)) {
                    dialog->findChild<QPlainTextEdit*>()->setPlainText(QStringLiteral("holiday"));
                    dialog->confirmButton()->click();
                }
        });
        view->bulkActions().first()->trigger();
        QTRY_COMPARE(c.fake->actions().size(), 1);
        const ConsoleAction action = c.fake->actions().first();
        QCOMPARE(action.kind, ConsoleAction::Kind::FreezeMany);
        QCOMPARE(action.envs, (QStringList{QStringLiteral("svc2.prod"), QStringLiteral("svc2.test")}));
        QCOMPARE(action.reason, QStringLiteral("holiday"));
    }
};

QTEST_MAIN(TestOrganisationConsole)
#include "test_organisationconsole.moc"
