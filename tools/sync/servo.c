// SPDX-License-Identifier: GPL-2.0
/* The servo interface: pick the implementation, clamp its output. */
#include "servo.h"

struct servo *servo_create(const struct daemon_config *c, int64_t max_rate_ppt,
			   int64_t freq_ppt)
{
	struct servo *s;

	freq_ppt = servo_clamp(freq_ppt, max_rate_ppt);
	switch (c->servo) {
	case SERVO_LINREG:
		s = servo_linreg_create(freq_ppt);
		break;
	case SERVO_PI:
	default:
		s = servo_pi_create(c->pi_kp, c->pi_ki, freq_ppt);
		break;
	}
	if (!s)
		return NULL;
	s->max_rate_ppt = max_rate_ppt;
	s->rate_ppt = freq_ppt;
	return s;
}

int64_t servo_sample(struct servo *s, int64_t offset_ns, int64_t local_ns,
		     int64_t interval_ns)
{
	s->rate_ppt = servo_clamp(s->ops->sample(s, offset_ns, local_ns, interval_ns),
				  s->max_rate_ppt);
	return s->rate_ppt;
}

int64_t servo_freq(const struct servo *s)
{
	return servo_clamp(s->ops->freq(s), s->max_rate_ppt);
}

void servo_reset(struct servo *s, int64_t freq_ppt)
{
	s->ops->reset(s, servo_clamp(freq_ppt, s->max_rate_ppt));
}

void servo_destroy(struct servo *s)
{
	if (s)
		s->ops->destroy(s);
}
