-- The two most viewed pages of each minute, ranked once the minute closes: a window Top-N
-- over the views per page and minute. Pages with as many views are ranked by name.
SELECT minute_start, minute_end, page, views, place
FROM (
  SELECT *, ROW_NUMBER() OVER (
    PARTITION BY minute_start, minute_end
    ORDER BY views DESC, page
  ) AS place
  FROM ref('minute_counts')
)
WHERE place <= 2
