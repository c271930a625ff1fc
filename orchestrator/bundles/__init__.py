"""Result bundles: a run's or a series' inputs and recorded replies in one zip (`layout`), and the
offline check that plays every match of one again and compares (`verify`)."""
