#pragma once

#include <optional>
#include <string>

namespace relctl {

// A database of its own beside the one a connection string names, for work
// that must not touch real history: rehearsals, benchmarks and tests. The
// constructor creates it (the login needs CREATEDB; migrating it, superuser);
// the destructor drops it unless kept. Dropping is WITH (FORCE): an actor
// killed mid-run may leave its session behind for a moment.
class ScratchDatabase final
{
public:
    // What a given name finds already there: dropped and created again, or
    // reused as it is (a seeded benchmark database serves several runs).
    enum class Existing { Drop, Reuse };

    // A fresh database named prefix + 12 random hex digits. Throws
    // Error(Unavailable) when the server cannot be reached and Error(Usage)
    // when it refuses to create the database (saying that CREATEDB is needed).
    explicit ScratchDatabase(const std::string& server, const std::string& prefix = "relctl_scratch_");
    ScratchDatabase(const std::string& server, std::string name, Existing existing);
    ~ScratchDatabase();
    ScratchDatabase(const ScratchDatabase&) = delete;
    ScratchDatabase& operator=(const ScratchDatabase&) = delete;

    const std::string& name() const { return m_name; }
    // `server` with its database replaced by this one.
    const std::string& conninfo() const { return m_conninfo; }
    // Whether an existing database was reused (Existing::Reuse), not created.
    bool reused() const { return m_reused; }
    bool dropped() const { return m_dropped; }
    // Left in place when this goes out of scope.
    void keep() { m_keep = true; }
    // Drops it now. A failure is logged, not thrown: a scratch database left
    // behind is harmless, and the caller is usually unwinding already.
    void drop();

private:
    void create(std::optional<Existing> existing); // none: a fresh name

    std::string m_server;
    std::string m_name;
    std::string m_conninfo;
    bool m_keep = false;
    bool m_created = false;
    bool m_reused = false;
    bool m_dropped = false;
};

} // namespace relctl
