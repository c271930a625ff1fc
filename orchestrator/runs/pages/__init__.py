"""A played match as it is read: the public pages of a world match (`world`, its replay frames in
`world_frames`) and of an arena game (`arena`), and the owner's transcript (`transcript`)."""
