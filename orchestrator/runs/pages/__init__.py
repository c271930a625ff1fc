"""A played match as it is read: the public pages of a world match (`world`, its replay frames in
`world_frames`) and of an arena game (`arena`), and for the run's owner its transcript
(`transcript`) and graded decisions (`decisions`)."""
