#include "relctl/error.h"
#include "relctl/protocol.h"

#include <array>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace relctl {

// libcrypto's, which libpq loads anyway: relctl links no library of its own for it.
std::string hmacSha256Hex(std::string_view key, std::string_view message)
{
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
             &length) == nullptr)
        throw Error(ExitCode::Internal, "cannot compute HMAC-SHA256 (libcrypto failed)");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * length);
    for (unsigned int i = 0; i < length; ++i) {
        hex += kHex[digest[i] >> 4];
        hex += kHex[digest[i] & 0xf];
    }
    return hex;
}

} // namespace relctl
