SELECT
    customer_id,
    SUM(amont) AS total_spend
FROM (SELECT customer_id, amount FROM source('orders')) AS o
GROUP BY customer_id
