"""Durable work: the job runner, schedules, webhooks, retention, and the wake-ups and
event writes that let any process follow a job."""
