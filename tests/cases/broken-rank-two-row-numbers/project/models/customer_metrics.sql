SELECT customer_id, amount
FROM (
    SELECT customer_id, amount,
        ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS rn,
        ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount) AS rn2
    FROM source('orders')
)
WHERE rn <= 3 AND rn2 <= 3
