/*
 * check_allow.c: the list of allowed peers (FCGI_WEB_SERVER_ADDRS): exact
 * IPv4 and IPv6 matches, prefixes (CIDR), IPv4-mapped peers, unix peers
 * never filtered,
 * and every malformed list refused with the entry named.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <string.h>

#include "allow.h"
#include "tests/suite.h"

static struct sockaddr_storage	ss;

/* A peer at the numeric address s (v4 or v6), in ss. */
static const struct sockaddr *
peer(const char *s)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1)
		sin->sin_family = AF_INET;
	else {
		ck_assert_int_eq(inet_pton(AF_INET6, s, &sin6->sin6_addr), 1);
		sin6->sin6_family = AF_INET6;
	}
	return (const struct sockaddr *)&ss;
}

START_TEST(core_exact_matches)
{
	struct allow	 al;
	char		 err[128];

	ck_assert_int_eq(allow_parse(&al, "127.0.0.1, 10.0.0.2,::1", err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(al.al_n, 3);
	ck_assert_int_eq(allow_match(&al, peer("127.0.0.1")), 1);
	ck_assert_int_eq(allow_match(&al, peer("10.0.0.2")), 1);
	ck_assert_int_eq(allow_match(&al, peer("::1")), 1);
	ck_assert_int_eq(allow_match(&al, peer("127.0.0.2")), 0);
	ck_assert_int_eq(allow_match(&al, peer("10.0.0.20")), 0);
	ck_assert_int_eq(allow_match(&al, peer("::2")), 0);
	/* An IPv4 peer on an IPv6 socket is its IPv4 address. */
	ck_assert_int_eq(allow_match(&al, peer("::ffff:127.0.0.1")), 1);
	ck_assert_int_eq(allow_match(&al, peer("::ffff:127.0.0.2")), 0);
	allow_free(&al);
	ck_assert_uint_eq(al.al_n, 0);
}
END_TEST

START_TEST(core_prefixes)
{
	struct allow	 al;
	char		 err[128];

	ck_assert_int_eq(allow_parse(&al, "10.0.0.0/8, 192.168.1.7/23, "
	    "fd00::/8,::1/128,2001:db8::/33, 198.51.100.9/32", err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(al.al_n, 6);
	ck_assert_int_eq(allow_match(&al, peer("10.0.0.0")), 1);
	ck_assert_int_eq(allow_match(&al, peer("10.255.255.255")), 1);
	ck_assert_int_eq(allow_match(&al, peer("11.0.0.0")), 0);
	ck_assert_int_eq(allow_match(&al, peer("9.255.255.255")), 0);
	/* /23: the host bits given are ignored, the 23 kept. */
	ck_assert_int_eq(allow_match(&al, peer("192.168.0.1")), 1);
	ck_assert_int_eq(allow_match(&al, peer("192.168.1.255")), 1);
	ck_assert_int_eq(allow_match(&al, peer("192.168.2.1")), 0);
	ck_assert_int_eq(allow_match(&al, peer("fd12:3456::1")), 1);
	ck_assert_int_eq(allow_match(&al, peer("fe00::1")), 0);
	ck_assert_int_eq(allow_match(&al, peer("::1")), 1);
	ck_assert_int_eq(allow_match(&al, peer("::2")), 0);
	ck_assert_int_eq(allow_match(&al, peer("2001:db8:7fff::1")), 1);
	ck_assert_int_eq(allow_match(&al, peer("2001:db8:8000::1")), 0);
	ck_assert_int_eq(allow_match(&al, peer("198.51.100.9")), 1);
	ck_assert_int_eq(allow_match(&al, peer("198.51.100.8")), 0);
	/* A mapped peer matches the IPv4 prefixes, not the IPv6 ones. */
	ck_assert_int_eq(allow_match(&al, peer("::ffff:10.1.2.3")), 1);
	ck_assert_int_eq(allow_match(&al, peer("::ffff:11.1.2.3")), 0);
	allow_free(&al);
	/* /0 lets every peer of its family in, none of the other. */
	ck_assert_int_eq(allow_parse(&al, "0.0.0.0/0", err, sizeof(err)), 0);
	ck_assert_int_eq(allow_match(&al, peer("203.0.113.5")), 1);
	ck_assert_int_eq(allow_match(&al, peer("2001:db8::5")), 0);
	allow_free(&al);
}
END_TEST

START_TEST(core_empty_and_unix)
{
	struct allow		 al;
	struct sockaddr_un	 sun;
	char			 err[128];

	memset(&al, 0, sizeof(al));
	ck_assert_int_eq(allow_match(&al, peer("192.0.2.1")), 1);
	ck_assert_int_eq(allow_parse(&al, "192.0.2.7", err, sizeof(err)), 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	ck_assert_int_eq(allow_match(&al, (struct sockaddr *)&sun), 1);
	ck_assert_int_eq(allow_match(&al, peer("192.0.2.1")), 0);
	allow_free(&al);
}
END_TEST

START_TEST(malformed_lists)
{
	static const char *const bad[] = { "", ",", "127.0.0.1,",
	    ",127.0.0.1", "127.0.0.1,,::1", "localhost", "127.0.0.1/33",
	    "::1/129", "10.0.0.0/", "10.0.0.0/x", "/8", "10.0.0.0/8/8",
	    "10.0.0.0/-1", "10.0.0.0/0008", "10.0.0.0/ 8", "fd00::/8x",
	    "127.0.0.256", "::1%lo", "[::1]", "1.2.3", " ",
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "4567" };
	struct allow	 al;
	char		 err[128];
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(allow_parse(&al, bad[i], err, sizeof(err)) == -1,
		    "'%s' accepted", bad[i]);
		ck_assert_ptr_null(al.al_addrs);
		ck_assert_uint_eq(al.al_n, 0);
		ck_assert_ptr_nonnull(strstr(err, "is not an IPv4 or IPv6"));
	}
	ck_assert_int_eq(allow_parse(&al, "127.0.0.1,localhost", err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "'localhost'"));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("allow");

	suite_add_case(s, "core", NULL, NULL, 0, core_exact_matches,
	    core_prefixes, core_empty_and_unix, NULL);
	suite_add_case(s, "malformed", NULL, NULL, 0, malformed_lists, NULL);
	return suite_run(s);
}
