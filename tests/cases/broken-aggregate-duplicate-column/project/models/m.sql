SELECT "sum(qty)", sum(qty) AS total
FROM source('s')
WHERE "sum(qty)" IS NOT NULL
GROUP BY "sum(qty)"
