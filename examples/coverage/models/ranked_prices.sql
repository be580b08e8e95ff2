-- ROW_NUMBER over an append input: the two highest prices of each category, by place.
-- A null price ranks after every price (nulls come last in a descending order), and of
-- two equal prices the earlier row ranks first.
SELECT category, place, id, price
FROM (
  SELECT category, id, price,
    ROW_NUMBER() OVER (PARTITION BY category ORDER BY price DESC) AS place
  FROM source('events')
  WHERE category IS NOT NULL
)
WHERE place <= 2
