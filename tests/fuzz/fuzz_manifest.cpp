// Manifests: any text is either refused with a usage error or is a JSON
// object within the limits (64 KiB, 64 levels), which survives being written
// out and read again.

#include "fuzz.h"
#include "relctl/error.h"
#include "relctl/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    nlohmann::json manifest;
    try {
        manifest = relctl::parseManifest(fuzz::text(data, size), "fuzz");
    } catch (const relctl::Error& e) {
        fuzz::check(e.code() == relctl::ExitCode::Usage, "a bad manifest is a usage error");
        return 0;
    }
    fuzz::check(manifest.is_object(), "a manifest is a JSON object");
    fuzz::check(size <= relctl::kMaxManifestBytes, "a manifest is at most 64 KiB");
    fuzz::check(relctl::jsonDepth(manifest) <= relctl::kMaxManifestDepth,
                "a manifest is at most 64 levels deep");
    const std::string dumped = manifest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    fuzz::check(nlohmann::json::parse(dumped, nullptr, false).is_object(), "a manifest dumps as an object");
    return 0;
}
