// precision/reference/fixed_exp.cpp: the fixed-point exp kernel and the shifted sum of
// exponentials (contract and error bound in fixed_exp.hpp).
//
// The constants below were printed by MPFR (400-bit values rounded to nearest in Q1.127);
// tests/precision/test_reference_fast.cpp recomputes every one of them.
#include "precision/reference/fixed_exp.hpp"

#include <bit>
#include <cmath>
#include <vector>

namespace carrier::reference {

namespace {

struct Word2 {
  std::uint64_t hi, lo;
};

constexpr Word2 kLog2E = {0xb8aa3b295c17f0bbULL, 0xbe87fed0691d3e89ULL};

// (ln 2)^k / k!, k = 0..10.
constexpr Word2 kCoefficients[fixed_exp_constants::kDegree + 1] = {
    {0x8000000000000000ULL, 0x0000000000000000ULL}, {0x58b90bfbe8e7bcd5ULL, 0xe4f1d9cc01f97b58ULL},
    {0x1ebfbdff82c58ea8ULL, 0x6f16b06ec9735fcbULL}, {0x071ac235c1282fe2ULL, 0xcce9d8aeccaf4b7cULL},
    {0x013b2ab6fba4e772ULL, 0x9ccbbe0b53eeac50ULL}, {0x002bb0ffcf14ce62ULL, 0x20e2fed34a297d86ULL},
    {0x00050c244be1b1e1ULL, 0xdbd2c2a261ac8d08ULL}, {0x00007ff2ff1622c3ULL, 0x1a1ac547321f639aULL},
    {0x00000b160111d2e4ULL, 0x11fec7ff3036d3beULL}, {0x000000da929e9cafULL, 0x3e1ed253872d27fdULL},
    {0x0000000f267a8ac5ULL, 0xc764fb7ed0eca974ULL},
};

// 2^(-(i+1)/256), i = 0..255.
constexpr Word2 kTable[1 << fixed_exp_constants::kTableBits] = {
    {0x7fa765aca88f6452ULL, 0x980dd10bf78c6ebeULL}, {0x7f4f08ae3dc7c425ULL, 0xd6e92ccaf3ce9785ULL},
    {0x7ef6e8da4b544f9aULL, 0x6233abd9c529b0cdULL}, {0x7e9f06067a4360baULL, 0x429f9d2c98f07702ULL},
    {0x7e47600890f223ddULL, 0xa2aeb10c12ed3b67ULL}, {0x7deff6b672f84e24ULL, 0x4ed2ff9caf657174ULL},
    {0x7d98c9e62113e1faULL, 0x37b3539343e2e4d5ULL}, {0x7d41d96db915019dULL, 0x3e12dd8a18aebfe6ULL},
    {0x7ceb252375c9cf9aULL, 0x9697049f20885028ULL}, {0x7c94acddaeea5d3aULL, 0x1a5bf0d8e43531abULL},
    {0x7c3e7072d904a6cdULL, 0xdff9ae7e2bab01fcULL}, {0x7be86fb985689ddcULL, 0x7f486a4b6b07db75ULL},
    {0x7b92aa886214411cULL, 0x68da487568d131c9ULL}, {0x7b3d20b6399fc236ULL, 0xc0c4bee5273bd188ULL},
    {0x7ae7d219f329b948ULL, 0x32f2293e4f19bc0fULL}, {0x7a92be8a92436616ULL, 0x3dce863d76cc07e2ULL},
    {0x7a3de5df36dcfeefULL, 0x76b7f4fab4f260d6ULL}, {0x79e947ef1d320d2dULL, 0x522ca0c8de19d62aULL},
    {0x7994e4919db5d74eULL, 0x003c56ea46591be0ULL}, {0x7940bb9e2cffd89cULL, 0xf44c054e647a3d26ULL},
    {0x78ecccec5bb84660ULL, 0xb5bce02397562e1bULL}, {0x78991853d684a284ULL, 0x9d87e85eb69919faULL},
    {0x78459dac65f45bb5ULL, 0x2b590a8e02f13863ULL}, {0x77f25ccdee6d7ae5ULL, 0xa32b0e7b4a46dc89ULL},
    {0x779f559070195e35ULL, 0xaad7186457129f40ULL}, {0x774c87cc06d1812dULL, 0xa5778f018c28e4c8ULL},
    {0x76f9f358ea0c5248ULL, 0x90e6d94741bbdf1cULL}, {0x76a7980f6cca15c2ULL, 0x300696db5325fd89ULL},
    {0x765575c7fd81d5a0ULL, 0x52dbb9af6be4c371ULL}, {0x76038c5b260e5eeeULL, 0x13e74122017e12fbULL},
    {0x75b1dba18b9b4c1fULL, 0xe87a4a8165a01b17ULL}, {0x75606373ee921c97ULL, 0x6816bad9b8372a7dULL},
    {0x750f23ab2a87593dULL, 0xb53bf5a16145082fULL}, {0x74be1c203627c62bULL, 0x7848e627a88096d3ULL},
    {0x746d4cac2325a155ULL, 0x636219a36ed9a4c6ULL}, {0x741cb5281e25ee34ULL, 0x3c8bc868563863efULL},
    {0x73cc556d6eadce5fULL, 0x716479200a8e8bc0ULL}, {0x737c2d55770fe711ULL, 0x3e2563eb146f9458ULL},
    {0x732c3cb9b459d38bULL, 0x77c1e7fdbdb5e042ULL}, {0x72dc8373be41a454ULL, 0x0f2f47a5276dd876ULL},
    {0x728d015d47136b40ULL, 0x6a097797b8581452ULL}, {0x723db6501b9ed446ULL, 0xb2f122017110b76dULL},
    {0x71eea2262324cb0cULL, 0x4a220ed55536dc68ULL}, {0x719fc4b95f452d28ULL, 0x84dff483cacc0776ULL},
    {0x71511de3ebec8912ULL, 0xf072493b5af2ec6aULL}, {0x7102ad7fff41e9b4ULL, 0x537e083c60a294daULL},
    {0x70b47367e994ae91ULL, 0xae9e8375a28ea50fULL}, {0x70666f76154a7088ULL, 0x832c4a8246e999e5ULL},
    {0x7018a18506ccf313ULL, 0xad2af021ae5e902aULL}, {0x6fcb096f5c782210ULL, 0x235c094638d127e8ULL},
    {0x6f7da70fce881bf8ULL, 0xf67727c5692b64d5ULL}, {0x6f307a412f074891ULL, 0xee83d16cf423342dULL},
    {0x6ee382de69bc7bf8ULL, 0x2b4b8da5a77eb726ULL}, {0x6e96c0c284192610ULL, 0x32cf1abd6d1fca5dULL},
    {0x6e4a33c89d278e48ULL, 0xde9ab349a3a2a224ULL}, {0x6dfddbcbed791baaULL, 0x9ec206ad4f14d532ULL},
    {0x6db1b8a7c714a92aULL, 0x8f352883f6e2f43eULL}, {0x6d65ca379564e638ULL, 0xe204445921cf1c5cULL},
    {0x6d1a1056dd26c382ULL, 0x270858820dbf60d6ULL}, {0x6cce8ae13c57ebdaULL, 0xff439ef651f095d6ULL},
    {0x6c8339b26a25494dULL, 0xd024a0756cb9df09ULL}, {0x6c381ca636d99642ULL, 0x10ab37f1bdb28397ULL},
    {0x6bed33988bcbfab4ULL, 0xd03f0cea133494b5ULL}, {0x6ba27e656b4eb57aULL, 0x1cd345dcc8169fefULL},
    {0x6b57fce8f09dd17eULL, 0xf3bb6b1b8e4b396bULL}, {0x6b0daeff4fcde703ULL, 0x6e59a8c4997f1cf9ULL},
    {0x6ac39484d5bae8c4ULL, 0xe18ed74a2a2650bcULL}, {0x6a79ad55e7f6fd0fULL, 0xac90ef7fd313162dULL},
    {0x6a2ff94f04b962b0ULL, 0x7984d45ea57407c3ULL}, {0x69e6784cc2cd61bcULL, 0xb7ecac563c6a61e6ULL},
    {0x699d2a2bd181482aULL, 0x1eac60ce06cc6e1aULL}, {0x69540ec8f895722dULL, 0x0912472be1ef2014ULL},
    {0x690b2601182b5e55ULL, 0x87fa7604edf8a458ULL}, {0x68c26fb128b4cd63ULL, 0x05c7ddc36ab551ffULL},
    {0x6879ebb63ae2edc6ULL, 0x618ee8be70e6dfccULL}, {0x683199ed779592caULL, 0x6b6a2e32acd26a81ULL},
    {0x67e97a341fca775aULL, 0xb18aa87029929e1dULL}, {0x67a18c678c8c8c60ULL, 0x9329e39931b8043eULL},
    {0x6759d0652ee352aeULL, 0x9415c227dcceae64ULL}, {0x6712460a8fc24071ULL, 0xf11ac1c7caf96377ULL},
    {0x66caed354ff83222ULL, 0x7b1b2092ae81f67eULL}, {0x6683c5c3281ee6e8ULL, 0xc426e3119cdefac6ULL},
    {0x663ccf91e88a8872ULL, 0xaf6a8931e3b20d14ULL}, {0x65f60a7f79393e2eULL, 0x7a483e47a2f5fb6eULL},
    {0x65af7669d9c2cbe4ULL, 0x5a6980e6376a7121ULL}, {0x6569132f21483ba6ULL, 0xd20da5683f1bdf1fULL},
    {0x6522e0ad7e639311ULL, 0xe14c341693356b30ULL}, {0x64dcdec3371793d1ULL, 0x4070fc950288b4bfULL},
    {0x64970d4ea8bf8765ULL, 0xd502ce312404bf6dULL}, {0x64516c2e47ff1622ULL, 0x986d1a7dadc38071ULL},
    {0x640bfb40a0b22959ULL, 0x2ca85fe3fd266abbULL}, {0x63c6ba6455dcd8aeULL, 0x609d171cbb6013bfULL},
    {0x6381a978219b628eULL, 0xeb590364d1a47459ULL}, {0x633cc85ad5122fbcULL, 0xaa8734587157612aULL},
    {0x62f816eb585de1ecULL, 0xb5efc43446e793bcULL}, {0x62b39508aa836d6eULL, 0x9f156864b26ecf9cULL},
    {0x626f4291e1603dd5ULL, 0x3954475202a8009cULL}, {0x622b1f66299a6599ULL, 0x4c2f37cb53a7584aULL},
    {0x61e72b64c690d8aeULL, 0x96be96da3de68698ULL}, {0x61a3666d124bb203ULL, 0x907642b0945c1d21ULL},
    {0x615fd05e7d6c83e4ULL, 0x58b7074de9306964ULL}, {0x611c69188f1eb339ULL, 0x4bdae5f190254dc4ULL},
    {0x60d9307ae507dd99ULL, 0xb9a31df2bd53ca20ULL}, {0x6096266533384a2bULL, 0x3e22beacd28043dbULL},
    {0x60534ab7441b6546ULL, 0x4370d151d4d71a53ULL}, {0x60109d50f86846d8ULL, 0x3799d9268d53a9c2ULL},
    {0x5fce1e124712437cULL, 0x07718367729233e1ULL}, {0x5f8bccdb3d398841ULL, 0x740ae855e5f85c28ULL},
    {0x5f49a98bfe1bc11bULL, 0xddbfb72b8b398968ULL}, {0x5f07b404c304c9f1ULL, 0x24cd1164dd58acb7ULL},
    {0x5ec5ec25db3f6a41ULL, 0x44a7b972377d9f91ULL}, {0x5e8451cfac061b5fULL, 0x54408fdb3687d7bdULL},
    {0x5e42e4e2b073d934ULL, 0x9a862aadd3def4efULL}, {0x5e01a53f7974fd86ULL, 0x6b80a02162caecafULL},
    {0x5dc092c6adb825b7ULL, 0x877169147f7f8519ULL}, {0x5d7fad59099f22fdULL, 0xba6a8ce922c9c1c6ULL},
    {0x5d3ef4d75f2ff504ULL, 0x7fd618a6e1c6d081ULL}, {0x5cfe69229605cef5ULL, 0x726939a2ac460ab9ULL},
    {0x5cbe0a1bab4226dfULL, 0x55fd329d38dcee41ULL}, {0x5c7dd7a3b17dcf74ULL, 0x8dc3cbbc2b35b2d1ULL},
    {0x5c3dd19bd0ba1c19ULL, 0xd644d45aa65ec4c7ULL}, {0x5bfdf7e546520f3eULL, 0x1f86d3cf884effe7ULL},
    {0x5bbe4a6164eb92f4ULL, 0x68b61e5374de5725ULL}, {0x5b7ec8f19468bbc8ULL, 0x838b2f86eeaa0d2dULL},
    {0x5b3f737751d915c7ULL, 0xaa9b6f17308f3bfaULL}, {0x5b0049d42f6afbb5ULL, 0xdaa66003d3ccff7bULL},
    {0x5ac14be9d45cf868ULL, 0xe3d4b26a7438cb5eULL}, {0x5a827999fcef3242ULL, 0x2cbec4d9baa55f50ULL},
    {0x5a43d2c67a54e0c0ULL, 0x25ecd75a22e4e0e3ULL}, {0x5a05575132a5cc20ULL, 0x715c89ee7cc9c1b0ULL},
    {0x59c7071c20cfd70bULL, 0xc66d3c9cf663eb3dULL}, {0x5988e20954889244ULL, 0x9f678a6e3cc528ceULL},
    {0x594ae7faf23eda51ULL, 0xc2a3658c1f74ff6aULL}, {0x590d18d3330c7f1dULL, 0xbe1c5313b6693904ULL},
    {0x58cf747464a7f584ULL, 0x710beb964e55cb88ULL}, {0x5891fac0e95612c7ULL, 0xc3e81bf4b690aec7ULL},
    {0x5854ab9b37dbd1e4ULL, 0xb3e4ab84c26f52e2ULL}, {0x581786e5db7022c1ULL, 0xdbd64a921b8ecd3bULL},
    {0x57da8c8373adc330ULL, 0xa910e19183721c35ULL}, {0x579dbc56b48521baULL, 0x6f93080e65d9a819ULL},
    {0x57611642662e4a32ULL, 0x958574ba9bd49b74ULL}, {0x57249a29651adc07ULL, 0x12c6e05a61a880f6ULL},
    {0x56e847eea1e80a48ULL, 0x85eb3dcc1e651db8ULL}, {0x56ac1f752150a563ULL, 0x24c054647acd1762ULL},
    {0x5670209ffc1f2e81ULL, 0xd311b9819f13a18fULL}, {0x56344b525f1ff494ULL, 0xaf0adcd0ef3cbb25ULL},
    {0x55f89f6f8b133af4ULL, 0x67375a8463b8b19eULL}, {0x55bd1cdad49f699bULL, 0xb2c011d93acf003dULL},
    {0x5581c377a44346f0ULL, 0x491e97114106444aULL}, {0x5546932976483b14ULL, 0xbb188090d3299c99ULL},
    {0x550b8bd3dab49cbcULL, 0x9368c96afbeeed98ULL}, {0x54d0ad5a753e077cULL, 0x2a0f12761a98fd3aULL},
    {0x5495f7a0fd3bbb8dULL, 0x99caf040423af68bULL}, {0x545b6a8b3d990704ULL, 0x4bd4b2136088643aULL},
    {0x542105fd14c7b868ULL, 0x926d26dd197b05edULL}, {0x53e6c9da74b29ab4ULL, 0xcf62da6a81cfb958ULL},
    {0x53acb60762affaadULL, 0xa82d1a285adc311eULL}, {0x5372ca67f774358eULL, 0xcdbbc6a78331212dULL},
    {0x533906e05f045105ULL, 0xe29690abd5cc8d11ULL}, {0x52ff6b54d8a89c75ULL, 0x0e5ebfb10b88380eULL},
    {0x52c5f7a9b6df5b76ULL, 0xd23c06bb40818244ULL}, {0x528cabc35f4f799cULL, 0xb62f3d1be5619187ULL},
    {0x525387864abb4762ULL, 0x6bb50db30b03eb81ULL}, {0x521a8ad704f3404fULL, 0x068eda418bc0f0f7ULL},
    {0x51e1b59a2cc8da3dULL, 0xf0f12bba8cce3495ULL}, {0x51a907b474015dc9ULL, 0x44bd1648a765f7d0ULL},
    {0x5170810a9f48c7cfULL, 0x37ccfa09c0e39e97ULL}, {0x513821818624b40cULL, 0x4dbd0277c067ef54ULL},
    {0x50ffe8fe12e750c4ULL, 0x05f4b8260014d6d3ULL}, {0x50c7d76542a25b71ULL, 0xc110e504333b2079ULL},
    {0x508fec9c251a267bULL, 0x9d23f4ceb22b8d4aULL}, {0x50582887dcb8a7e1ULL, 0x0c96e3cf6d87ecd5ULL},
    {0x50208b0d9e8090deULL, 0xefc5b7a682425164ULL}, {0x4fe91412b2006e82ULL, 0xfdc06a9060cbee30ULL},
    {0x4fb1c37c7145d328ULL, 0x4ce4239b21af3219ULL}, {0x4f7a993048d088d6ULL, 0xd0488f84f5dcfee9ULL},
    {0x4f439513b785cc7fULL, 0xa34230a131c408ddULL}, {0x4f0cb70c4ea39210ULL, 0x007c8a2d63cddd78ULL},
    {0x4ed5feffb1b3d154ULL, 0xc66e26fff1875a3eULL}, {0x4e9f6cd3967fdba8ULL, 0x6f24a6782874cd86ULL},
    {0x4e69006dc503ba65ULL, 0x65a0371d6cbb9c02ULL}, {0x4e32b9b417619616ULL, 0xa72c366fb43214efULL},
    {0x4dfc988c79d52660ULL, 0xa3561314dc40aba3ULL}, {0x4dc69cdceaa72a9cULL, 0x51540bd151e61f90ULL},
    {0x4d90c68b7a20eb1eULL, 0x75dafc9a3d13f176ULL}, {0x4d5b157e4a7fc325ULL, 0x188d1d8dcebce35bULL},
    {0x4d25899b8fe8b365ULL, 0x2c5367bbf2df5c53ULL}, {0x4cf022c9905bfd32ULL, 0x721843659a5afe57ULL},
    {0x4cbae0eea3a8c63bULL, 0xa17c34b0ce7921ceULL}, {0x4c85c3f13360c4d4ULL, 0xe73c70c023e1b779ULL},
    {0x4c50cbb7bacbf4caULL, 0xcd1f9f9fe684dc63ULL}, {0x4c1bf828c6dc54b7ULL, 0xa356918c17217b7bULL},
    {0x4be7492af621abd5ULL, 0x875559a84ada9430ULL}, {0x4bb2bea4f8bd5847ULL, 0x283d17548e0cebd8ULL},
    {0x4b7e587d905625d1ULL, 0x6cffbbce198355b9ULL}, {0x4b4a169b900c2d00ULL, 0x24754db41d4e1162ULL},
    {0x4b15f8e5dc6cbaafULL, 0xeba5914aedb876e9ULL}, {0x4ae1ff436b663ff7ULL, 0x7a9194e3f2ae2111ULL},
    {0x4aae299b443c4a6aULL, 0x8bce6e96f58c4432ULL}, {0x4a7a77d47f7b84b0ULL, 0x97457d6892a8ef2aULL},
    {0x4a46e9d646edbf69ULL, 0x9c6ebdff1a1817a4ULL}, {0x4a137f87d58e025bULL, 0x3c573c0f28259ff7ULL},
    {0x49e038d0777ca5e0ULL, 0x67c05f9e76b90ad2ULL}, {0x49ad159789f37495ULL, 0xe99cca074ec92774ULL},
    {0x497a15c47b39d53eULL, 0x1a24ac31b2c56e9cULL}, {0x4947393eca98fcd6ULL, 0x0aadf7a7a52046a7ULL},
    {0x49147fee085028d6ULL, 0x7e6488e54cb18464ULL}, {0x48e1e9b9d588e19bULL, 0x07eb6c70572d64ecULL},
    {0x48af7689e44b44e9ULL, 0xa7daabbeb4f6478eULL}, {0x487d2645f7725895ULL, 0x4bf4a4a52f6d2d88ULL},
    {0x484af8d5e2a06535ULL, 0x92d2cfcaac8e99b5ULL}, {0x4818ee218a3358eeULL, 0x3bac0a5424a743f1ULL},
    {0x47e70610e3393240ULL, 0xadb5f6850a3d0f25ULL}, {0x47b5408bf36472e2ULL, 0x067fd84487479413ULL},
    {0x47839d7ad1009a90ULL, 0x227f7734921bee98ULL}, {0x47521cc5a2e6a9e0ULL, 0x16e00a2643c1ea63ULL},
    {0x4720be54a071ad00ULL, 0x9778010f8c8e78a4ULL}, {0x46ef821011734e6aULL, 0xc79cad109f8d7e6bULL},
    {0x46be67e04e28717bULL, 0xf85a4b6927fea3d4ULL}, {0x468d6fadbf2dd4f2ULL, 0xda63da4b4720d69bULL},
    {0x465c9960dd74bd4aULL, 0xadd85f17e082c52dULL}, {0x462be4e23237a6eeULL, 0xfdc2e68f0941725fULL},
    {0x45fb521a56ef0042ULL, 0x78ff8ab1699087caULL}, {0x45cae0f1f545eb73ULL, 0x7df23143ac529e48ULL},
    {0x459a9151c70f0818ULL, 0xf23b82ea1a3273b2ULL}, {0x456a632296394492ULL, 0x0355cf75584efe4bULL},
    {0x453a564d3cc4b723ULL, 0x70be3205daa50440ULL}, {0x450a6abaa4b77ecdULL, 0x040650ec961b4061ULL},
    {0x44daa053c812abd1ULL, 0xdee08b6e4620e4d2ULL}, {0x44aaf701b0c72feeULL, 0x4aeb4c935a38bdcaULL},
    {0x447b6ead78aad635ULL, 0xbab08fc048e04d15ULL}, {0x444c0740496d4293ULL, 0xaefc6bb64c633ab1ULL},
    {0x441cc0a35c8cf8eaULL, 0x3758b497eea9f570ULL}, {0x43ed9abffb4c6bc8ULL, 0xc824776285099454ULL},
    {0x43be957f7ea712b6ULL, 0x24643abfde48ad4bULL}, {0x438fb0cb4f468808ULL, 0x1d0b93e2bda954abULL},
    {0x4360ec8ce577ae43ULL, 0xeb21bc0ce95e9694ULL}, {0x433248adc91fdd01ULL, 0xedc16e24f717a2abULL},
    {0x4303c51791b2154fULL, 0x98906d21cef09cecULL}, {0x42d561b3e6243d8aULL, 0x62e4adc610aa60d9ULL},
    {0x42a71e6c7ce464aeULL, 0x8b6439e8e9bc60e5ULL}, {0x4278fb2b1bce0d14ULL, 0x87818316135add2fULL},
    {0x424af7d9981f7e97ULL, 0xf9c7ff5c02f0a0c5ULL}, {0x421d1461d66f2023ULL, 0x0d7c976509fe8ac1ULL},
    {0x41ef50adcaa0d899ULL, 0x19a2a22c37ff36a4ULL}, {0x41c1aca777db771bULL, 0x7100ea761ec9fb42ULL},
    {0x41942838f07e22a3ULL, 0x484a8663c694f82bULL}, {0x4166c34c5615d0ebULL, 0x9f1523ada3290600ULL},
    {0x41397dcbd952c4a6ULL, 0x1bc9d50684640c7eULL}, {0x410c57a1b9fe12f5ULL, 0xce3e6883691f9bb4ULL},
    {0x40df50b846ef302aULL, 0xd023dd5bc234898aULL}, {0x40b268f9de0183b9ULL, 0xbdf2b293de8a6f7aULL},
    {0x4085a050ec0a036aULL, 0x067781d58a5332a8ULL}, {0x4058f6a7ecccd5b6ULL, 0x1299ab8cdb737e90ULL},
    {0x402c6be96af2fb58ULL, 0x4a6ac4fb04772551ULL}, {0x4000000000000000ULL, 0x0000000000000000ULL},
};

constexpr U128 Get(Word2 w) { return (U128{w.hi} << 64) | w.lo; }

// floor(d * 2^114) for 0 <= d < 2^14.
U128 ToFixed114(double d) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(d);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0 && frac == 0) return 0;
  const std::uint64_t mant = biased == 0 ? frac : (frac | (std::uint64_t{1} << 52));
  const int shift = (biased == 0 ? -1074 : biased - 1075) + 114;  // d = mant * 2^(shift-114)
  if (shift >= 0) return U128{mant} << shift;
  if (shift <= -64) return 0;  // mant < 2^53: nothing survives a shift of 64 or more
  return U128{mant} >> (-shift);
}

// acc (Q64.192) += mant * 2^(-127 - shift), truncated to 2^-192.
void AddShifted(std::uint64_t acc[4], U128 mant, int shift) {
  const int sh = 65 - shift;  // acc units: value * 2^192 = mant * 2^(65 - shift)
  std::uint64_t add[4] = {0, 0, 0, 0};
  if (sh < 0) {
    if (sh <= -128) return;
    const U128 v = mant >> (-sh);
    add[0] = Lo64(v);
    add[1] = Hi64(v);
  } else {
    const int w = sh / 64, b = sh % 64;  // sh <= 65: w <= 1
    const std::uint64_t lo = Lo64(mant), hi = Hi64(mant);
    add[w] = lo << b;
    add[w + 1] = (hi << b) | (b != 0 ? lo >> (64 - b) : 0);
    if (b != 0) add[w + 2] = hi >> (64 - b);
  }
  U128 carry = 0;
  for (int i = 0; i < 4; ++i) {
    const U128 s = U128{acc[i]} + add[i] + carry;
    acc[i] = Lo64(s);
    carry = s >> 64;
  }
}

}  // namespace

namespace fixed_exp_constants {
U128 Log2E() { return Get(kLog2E); }
U128 Coefficient(int k) { return Get(kCoefficients[k]); }
U128 Table(int i) { return Get(kTable[i]); }
}  // namespace fixed_exp_constants

FixedExp FixedExpNeg(double s, double e) {
  // q = -(s + e) >= 0 in units 2^-114, each part truncated.
  U128 q = ToFixed114(-s);
  if (e < 0) {
    q += ToFixed114(-e);
  } else if (e > 0) {
    const U128 qe = ToFixed114(e);
    q = q > qe ? q - qe : 0;
  }
  if (q == 0) return {U128{1} << 127, 0};
  constexpr int kFracBits = 113;
  const U128 t = MulHi128(q, Get(kLog2E));  // q * log2(e) in units 2^-113
  const int whole = static_cast<int>(t >> kFracBits);
  const U128 f = t & ((U128{1} << kFracBits) - 1);
  const int idx = static_cast<int>(f >> (kFracBits - fixed_exp_constants::kTableBits));
  // 2^-f = 2^(-(idx+1)/256) * 2^h, h = (idx+1)/256 - f in (0, 2^-8].
  const U128 h = (U128(idx + 1) << (kFracBits - fixed_exp_constants::kTableBits)) - f;
  const U128 h127 = h << (127 - kFracBits);
  U128 p = Get(kCoefficients[fixed_exp_constants::kDegree]);
  for (int k = fixed_exp_constants::kDegree - 1; k >= 0; --k)
    p = Get(kCoefficients[k]) + MulQ127(h127, p);
  return {MulQ127(Get(kTable[idx]), p), whole};
}

ShiftedExpSum SumExpShifted(std::span<const double> x, double m) {
  ShiftedExpSum r;
  constexpr double kSkipBelow = -134.0;  // exp(-134) < 2^-193: below the accumulator's unit
  // A term is a pure function of v (m is fixed): a direct-mapped memo of the last term per
  // slot returns the same (mant, shift) FixedExpNeg gave for that v. Narrow storage formats
  // (bf16, fp16, fp8) repeat a few thousand values, so most terms skip the kernel. Inputs
  // without repeats (fp32, fp64) would only pay for the lookups: the memo is dropped for the
  // rest of the input once a window of kWindow kernel terms had fewer than kWindow / 4 hits.
  constexpr int kMemoBits = 14;
  constexpr std::uint64_t kWindow = 4096;
  struct Memo {
    std::uint64_t key = 0;  // v's bits; 0 (v = +0) never stored, so it marks an empty slot
    FixedExp term;
  };
  std::vector<Memo> memo(std::size_t{1} << kMemoBits);
  bool use_memo = true;
  std::uint64_t window = 0, hits = 0;
  for (const double v : x) {
    if (v == m) {
      ++r.exact_terms;
      AddShifted(r.word, U128{1} << 127, 0);
      continue;
    }
    if (v == -INFINITY) continue;
    ++r.approx_terms;
    // TwoSum (Knuth): s + e == v - m exactly; s is never infinite here (s > -134).
    const double s = v - m;
    if (!(s > kSkipBelow)) continue;
    const double bb = s - v;
    const double e = (v - (s - bb)) + (-m - bb);
    if (!use_memo) {
      const FixedExp t = FixedExpNeg(s, e);
      AddShifted(r.word, t.mant, t.shift);
      continue;
    }
    const auto key = std::bit_cast<std::uint64_t>(v);
    Memo& slot = memo[(key * 0x9E3779B97F4A7C15ULL) >> (64 - kMemoBits)];
    if (slot.key != key || key == 0) {
      slot.key = key;
      slot.term = FixedExpNeg(s, e);
    } else {
      ++hits;
    }
    AddShifted(r.word, slot.term.mant, slot.term.shift);
    if (++window == kWindow) {
      use_memo = hits >= kWindow / 4;
      window = hits = 0;
    }
  }
  return r;
}

double ShiftedExpSum::RelErrorBound() const {
  if (approx_terms == 0) return 0.0;
  return kFixedExpRelError + std::ldexp(static_cast<double>(approx_terms), -192);
}

double ShiftedExpSum::Approximate() const {
  double v = 0;
  for (int i = 3; i >= 0; --i) v = v * 0x1p64 + static_cast<double>(word[i]);
  return std::ldexp(v, -192);
}

}  // namespace carrier::reference
