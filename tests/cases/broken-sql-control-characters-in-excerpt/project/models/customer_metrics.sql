SELECT customer_id, SUM(amont) AS total_spend /* [31m‮ */
FROM source('orders')
GROUP BY customer_id
