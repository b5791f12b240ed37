(** * Checker: boolean checkers for the exported claims, with their soundness.

    Every checker is a boolean function of exported data and witnesses,
    computed by [vm_compute]; its soundness theorem turns [true] into the
    claimed statement about the Jacobian over Q, recomputed from the
    network's own definition ([Jacobian]).  Witnesses (visible columns,
    kernel directions, pivot rows, inverses mod p) are never trusted:
    each is checked. *)

From Coq Require Import List QArith ZArith Lia Arith Sorted Uint63.
From Symattn Require Import Alg Series Tangent Network Modp Jacobian Rank Smith Bounds.
Import ListNotations.

(** ** Small boolean helpers and their specifications *)

Lemma nth_map_seq' {X : Type} (n k : nat) (f : nat -> X) d : (k < n)%nat -> nth k (map f (seq 0 n)) d = f k.
Proof.
  intros H. rewrite (nth_indep _ _ (f O)) by (rewrite map_length, seq_length; auto).
  rewrite map_nth, seq_nth by auto; reflexivity.
Qed.

Fixpoint sorted_b (l : list nat) : bool :=
  match l with
  | x :: ((y :: _) as t) => andb (Nat.leb x y) (sorted_b t)
  | _ => true
  end.

Lemma sorted_b_spec l : sorted_b l = true -> Sorted le l.
Proof.
  induction l as [|x l IH]; intros H; [constructor|].
  destruct l as [|y l]; [repeat constructor|].
  simpl in H; apply andb_prop in H as [H1 H2].
  constructor; [apply IH; auto|constructor; apply Nat.leb_le; auto].
Qed.

Fixpoint nodup_b (l : list nat) : bool :=
  match l with [] => true | x :: l' => andb (negb (existsb (Nat.eqb x) l')) (nodup_b l') end.

Lemma nodup_b_spec l : nodup_b l = true -> NoDup l.
Proof.
  induction l as [|x l IH]; simpl; intros H; [constructor|].
  apply andb_prop in H as [H1 H2]; constructor; auto.
  intros Hin. apply negb_true_iff in H1. rewrite <- not_true_iff_false in H1.
  apply H1, existsb_exists; exists x; split; auto; apply Nat.eqb_refl.
Qed.

Definition p_ok (p : int) : bool := andb (1 <? to_Z p)%Z (to_Z p <? 2147483648)%Z.

Lemma p_ok_spec p : p_ok p = true -> (1 < to_Z p < 2147483648)%Z.
Proof. unfold p_ok; intros H; apply andb_prop in H as [H1 H2]; apply Z.ltb_lt in H1, H2; lia. Qed.

Lemma Forall2_seq_map_list {X Y : Type} (R : X -> Y -> Prop) (f : nat -> X) (g : nat -> Y) (S : list nat) :
  (forall k, R (f k) (g k)) -> Forall2 R (map f S) (map g S).
Proof. intros H; induction S; simpl; constructor; auto. Qed.

Lemma forallb_seq f n : forallb f (seq 0 n) = true -> forall j, (j < n)%nat -> f j = true.
Proof. intros H j Hj; rewrite forallb_forall in H; apply H, in_seq; lia. Qed.

Lemma forallb_In {X : Type} (f : X -> bool) l x : forallb f l = true -> In x l -> f x = true.
Proof. rewrite forallb_forall; auto. Qed.

(** ** Shapes of the Jacobian *)

Lemma jac_rows_shape S P out : Forall (fun row => length row = P) (jac_rows S P out).
Proof.
  unfold jac_rows; induction out; simpl; [constructor|].
  apply Forall_app; split; auto.
  apply Forall_forall; intros row Hrow; apply in_map_iff in Hrow as [e [<- _]].
  unfold jac_row; rewrite map_length, seq_length; reflexivity.
Qed.

Lemma native_jacobian_shape K m ls bank :
  Forall (fun row => length row = native_size ls) (native_jacobian K m ls bank).
Proof.
  unfold native_jacobian; induction bank; cbn [flat_map]; [constructor|].
  apply Forall_app; split; [apply jac_rows_shape|exact IHbank].
Qed.

Lemma effective_jacobian_shape K m ss L bank :
  Forall (fun row => length row = effective_size ss L) (effective_jacobian K m ss L bank).
Proof.
  unfold effective_jacobian; induction bank; cbn [flat_map]; [constructor|].
  apply Forall_app; split; [apply jac_rows_shape|exact IHbank].
Qed.

(** ** Reduction of a rational matrix, and nonsingularity from a witness *)

Definition reduce (p : int) (A : QM) : list (list fp) := map (map (fofQ p)) A.

Lemma reduce_rel p A : (1 < to_Z p < 2147483648)%Z -> Forall2 (Forall2 (Rp p)) A (reduce p A).
Proof.
  intros Hp; pose proof (Fp_rel p Hp) as HR.
  unfold reduce; induction A; simpl; constructor; auto.
  clear IHA; induction a; simpl; constructor; auto; apply (rel_ofQ _ _ _ HR).
Qed.

Definition check_nonsingular (p : int) (A : QM) (W : list (list Z)) : bool :=
  andb (forallb (fun row => Nat.eqb (length row) (length A)) A)
       (check_inverse p (reduce p A) (seq 0 (length A)) W (length A)).

Lemma check_nonsingular_sound p A W : (1 < to_Z p < 2147483648)%Z ->
  check_nonsingular p A W = true -> nonsingular A.
Proof.
  intros Hp H; apply andb_prop in H as [H1 H2]; split.
  - apply Forall_forall; intros row Hrow; apply Nat.eqb_eq. rewrite forallb_forall in H1; apply H1; auto.
  - eapply fcr_of_check; [exact Hp|apply reduce_rel; exact Hp|exact H2].
Qed.

(** ** Theorem 4 / Prop. D.1: Smith orders, with the zeros checked over Q *)

Definition zeros_ok (m r P N : nat) (s : list nat) (JB : SM) : bool :=
  forallb (fun i =>
    forallb (fun c =>
      forallb (fun k => Qeq_bool (coef (nth c (nth i JB []) []) k) 0)
              (seq 0 (if Nat.ltb c r then nth c s O else m)))
      (seq 0 P))
    (seq 0 N).

Lemma zeros_ok_sound m r P N s JB : (r <= P)%nat -> zeros_ok m r P N s JB = true ->
  (forall i c k, (i < N)%nat -> (c < r)%nat -> (k < nth c s O)%nat -> coef (nth c (nth i JB []) []) k == 0) /\
  (forall i c k, (i < N)%nat -> (r <= c < P)%nat -> (k < m)%nat -> coef (nth c (nth i JB []) []) k == 0).
Proof.
  intros HrP H; split; intros i c k Hi Hc Hk;
    pose proof (forallb_seq _ _ H i Hi) as H1; simpl in H1;
    [pose proof (forallb_seq _ _ H1 c ltac:(lia)) as H2|pose proof (forallb_seq _ _ H1 c ltac:(lia)) as H2];
    simpl in H2.
  - destruct (Nat.ltb_spec c r); [|lia].
    apply Qeq_bool_eq, (forallb_seq _ _ H2 k Hk).
  - destruct (Nat.ltb_spec c r); [lia|].
    apply Qeq_bool_eq, (forallb_seq _ _ H2 k Hk).
Qed.

(** The data of a spectrum certificate: the visible columns [vis] (one per
    claimed order, in the order of [s]), the kernel directions [xi] (series
    vectors in all native parameters), the pivot rows [I] of the divided
    frame, a modulus [p] and the inverses mod p of [B(0)] and of the frame. *)
Record spectrum_witness := {
  sw_vis : list nat;
  sw_xi : list (list (list Q));
  sw_rows : list nat;
  sw_p : int;
  sw_WB : list (list Z);
  sw_WE : list (list Z)
}.

Definition check_spectrum_exact (m : nat) (ls : list (list Q * QSM * QSM * QSM)) (bank : list QSM)
    (s : list nat) (z : nat) (w : spectrum_witness) : bool :=
  let r := length s in
  let P := (r + z)%nat in
  let J := native_jacobian Qalg m ls bank in
  let N := length J in
  let B := frame_B P (sw_vis w) (sw_xi w) in
  let JB := smat_mul m P J B in
  let p := sw_p w in
  andb (andb (andb (sorted_b s) (forallb (fun k => Nat.ltb k m) s))
             (andb (andb (Nat.eqb (length (sw_vis w)) r) (Nat.leb r N))
                   (andb (Nat.eqb (native_size ls) P) (Nat.eqb (length (sw_xi w)) z))))
       (andb (andb (andb (nodup_b (sw_rows w)) (Nat.eqb (length (sw_rows w)) r))
                   (andb (forallb (fun i => Nat.ltb i N) (sw_rows w)) (p_ok p)))
             (andb (check_nonsingular p (const_part B) (sw_WB w))
                   (andb (zeros_ok m r P N s JB)
                         (check_nonsingular p (divided_frame m J s (sw_vis w) (sw_xi w) (sw_rows w)) (sw_WE w))))).

Theorem check_spectrum_exact_sound m ls bank s z w :
  check_spectrum_exact m ls bank s z w = true ->
  smith_form m (native_jacobian Qalg m ls bank) s z.
Proof.
  unfold check_spectrum_exact; intros H.
  repeat match goal with
         | H : andb _ _ = true |- _ => apply andb_prop in H as [? ?]
         end.
  repeat match goal with
         | H : Nat.eqb _ _ = true |- _ => apply Nat.eqb_eq in H
         | H : Nat.leb _ _ = true |- _ => apply Nat.leb_le in H
         end.
  set (J := native_jacobian Qalg m ls bank) in *.
  match goal with H : length (sw_xi w) = z |- _ => rewrite <- H in * end.
  match goal with H : p_ok _ = true |- _ => apply p_ok_spec in H end.
  match goal with H : zeros_ok _ _ _ _ _ _ = true |- _ => apply zeros_ok_sound in H as [Hval Hker]; [|lia] end.
  apply (smith_of_frame m J s (sw_vis w) (sw_xi w) (sw_rows w)); auto.
  - apply sorted_b_spec; auto.
  - apply Forall_forall; intros k Hk; apply Nat.ltb_lt.
    match goal with H : forallb (fun k => Nat.ltb k m) s = true |- _ => rewrite forallb_forall in H; apply H; auto end.
  - pose proof (native_jacobian_shape Qalg m ls bank) as HS. fold J in HS.
    match goal with H : native_size ls = _ |- _ => rewrite H in HS end. exact HS.
  - eapply check_nonsingular_sound; eauto.
  - apply nodup_b_spec; auto.
  - apply Forall_forall; intros i Hi; apply Nat.ltb_lt.
    match goal with H : forallb (fun i => Nat.ltb i _) (sw_rows w) = true |- _ => rewrite forallb_forall in H; apply H; auto end.
  - eapply check_nonsingular_sound; eauto.
Qed.

(** ** Theorem 3: ray Jacobians of the zero-input jets *)

(** The coefficient matrix through degree [N]: each row of [J] gives [N + 1]
    rows, the coefficients of [rho^0, ..., rho^N] of its entries. *)
Definition ray_coefficients {X : Type} (d : X) (N : nat) (J : list (list (list X))) : list (list X) :=
  flat_map (fun row => map (fun k => map (fun s => nth k s d) row) (seq 0 (S N))) J.

Definition qray (N : nat) (J : SM) : QM := ray_coefficients 0%Q N J.

Lemma ray_coefficients_rel {X Y : Type} (R : X -> Y -> Prop) dx dy N J J' :
  R dx dy -> Forall2 (Forall2 (Forall2 R)) J J' ->
  Forall2 (Forall2 R) (ray_coefficients dx N J) (ray_coefficients dy N J').
Proof.
  intros Hd H; unfold ray_coefficients; induction H; cbn [flat_map]; [constructor|].
  apply Forall2_app; auto.
  apply Forall2_seq_map; intros k.
  eapply Forall2_map; eauto; intros s s' Hs; apply Forall2_nth; auto.
Qed.

(** Sharp degree: through degree [N] the ray coefficients determine all [P]
    parameters to first order (full column rank), and the block [last] (the
    entries of [M_D]) enters no coefficient below degree [N]. *)
Definition block_vanishes_below (N : nat) (J : SM) (last : list nat) : Prop :=
  forall row j k, In row J -> In j last -> (k < N)%nat -> coef (nth j row []) k == 0.

Definition sharp_degree (J : SM) (P N : nat) (last : list nat) : Prop :=
  full_column_rank P (qray N J) /\ block_vanishes_below N J last.

(** Hence no lower degree has full column rank: the least such degree is [N]. *)
Lemma sharp_degree_least J P N last :
  sharp_degree J P N last -> last <> [] -> Forall (fun j => (j < P)%nat) last ->
  Forall (fun row => length row = P) J ->
  forall N', (N' < N)%nat -> ~ full_column_rank P (qray N' J).
Proof.
  intros [_ Hv] Hne Hlt HJ N' HN' Hf.
  destruct last as [|j last']; [congruence|].
  assert (Hj : (j < P)%nat) by (inversion Hlt; auto).
  set (x := map (fun i => if Nat.eqb i j then 1 else 0) (seq 0 P)).
  assert (Hx : length x = P) by (unfold x; rewrite map_length, seq_length; auto).
  specialize (Hf x Hx).
  assert (Z : qzero (qmat_vec (qray N' J) x)).
  { apply Forall_forall; intros q Hq.
    unfold qmat_vec, mat_vec in Hq; apply in_map_iff in Hq as [row [<- Hrow]].
    unfold qray, ray_coefficients in Hrow; apply in_flat_map in Hrow as [jr [HJr Hk]].
    apply in_map_iff in Hk as [k [<- Hk]]. apply in_seq in Hk.
    assert (Hl : length jr = P) by (rewrite Forall_forall in HJ; auto).
    rewrite (dot_sumq _ _ P) by (rewrite ?map_length; change (car Qalg) with Q in *; lia).
    rewrite (sumq_ext _ _ (fun i => (if Nat.eqb j i then 1 else 0) * nth i (map (fun s => nth k s 0) jr) 0)).
    - rewrite sumq_delta by auto. rewrite (nth_map_lt _ _ []) by lia.
      apply (Hv jr j k HJr); [left; auto|lia].
    - intros i Hi. unfold x. rewrite (nth_map_seq' P i) by auto.
      rewrite Nat.eqb_sym. apply Qmult_comm. }
  specialize (Hf Z). apply qzero_nth with (k := j) in Hf; [|lia].
  unfold x in Hf. rewrite (nth_map_seq' P j) in Hf by auto. rewrite Nat.eqb_refl in Hf.
  discriminate (proj1 (Qeq_alt 1 0) Hf).
Qed.

(** Rank witnesses for a ray coefficient matrix: columns [S], rows [I], [W] the inverse
    mod [p] of the selected square block. *)
Record rank_witness := {
  rw_cols : list nat;
  rw_rows : list nat;
  rw_p : int;
  rw_W : list (list Z)
}.

Definition fpray (p : int) (N : nat) (J : list (list (list fp))) : list (list fp) :=
  ray_coefficients (0%uint63, true) N J.

Definition fcols (A : list (list fp)) (S : list nat) : list (list fp) :=
  map (fun row => map (fun j => nth j row (0%uint63, true)) S) A.

Definition check_rank_of (p : int) (Ab : list (list fp)) (w : rank_witness) (r : nat) : bool :=
  andb (andb (p_ok p) (Nat.eqb (length (rw_cols w)) r))
       (andb (nodup_b (rw_cols w)) (check_inverse p (fcols Ab (rw_cols w)) (rw_rows w) (rw_W w) r)).

Lemma check_rank_of_sound p (A : QM) Ab w r :
  p = rw_p w -> ((1 < to_Z p < 2147483648)%Z -> Forall2 (Forall2 (Rp p)) A Ab) ->
  check_rank_of p Ab w r = true -> rank_at_least A r.
Proof.
  intros -> HA H; unfold check_rank_of in H.
  apply andb_prop in H as [H1 H2]; apply andb_prop in H1 as [Hp Hl]; apply andb_prop in H2 as [Hn Hc].
  apply p_ok_spec in Hp; apply Nat.eqb_eq in Hl; subst r.
  apply (rank_of_check (rw_p w) A (rw_cols w) (fcols Ab (rw_cols w)) (rw_rows w) (rw_W w)); auto.
  - specialize (HA Hp); pose proof (Fp_rel _ Hp) as HR.
    unfold qcols, fcols; eapply Forall2_map; eauto; intros row row' Hr.
    apply Forall2_seq_map_list; intros j; apply Forall2_nth; auto; apply (rel_zero _ _ _ HR).
  - apply nodup_b_spec; auto.
Qed.

(** *** Theorem 3, with the zeros of the last block computed over Q *)

Definition zero_block_exact (N : nat) (J : SM) (last : list nat) : bool :=
  forallb (fun row => forallb (fun j => forallb (fun k => Qeq_bool (coef (nth j row []) k) 0) (seq 0 N)) last) J.

Lemma zero_block_exact_sound N J last : zero_block_exact N J last = true -> block_vanishes_below N J last.
Proof.
  intros H row j k Hrow Hj Hk.
  unfold zero_block_exact in H. rewrite forallb_forall in H. specialize (H row Hrow).
  rewrite forallb_forall in H. specialize (H j Hj). apply Qeq_bool_eq, (forallb_seq _ _ H k Hk).
Qed.

Definition check_jet_exact (N : nat) (ss : list (list Q * QSM)) (L : QSM) (rays : list QSM)
    (last : list nat) (w : rank_witness) : bool :=
  let p := rw_p w in
  let P := effective_size ss L in
  andb (andb (p_ok p) (check_inverse p (fpray p N (effective_jacobian (Fpalg p) (S N) ss L rays)) (rw_rows w) (rw_W w) P))
       (zero_block_exact N (effective_jacobian Qalg (S N) ss L rays) last).

Theorem check_jet_exact_sound N ss L rays last w :
  check_jet_exact N ss L rays last w = true ->
  sharp_degree (effective_jacobian Qalg (S N) ss L rays) (effective_size ss L) N last.
Proof.
  unfold check_jet_exact; intros H.
  apply andb_prop in H as [H1 H2]; apply andb_prop in H1 as [Hp Hc]; apply p_ok_spec in Hp.
  split; [|apply zero_block_exact_sound; auto].
  eapply fcr_of_check; [exact Hp| |exact Hc].
  apply ray_coefficients_rel; [apply (rel_zero _ _ _ (Fp_rel _ Hp))|].
  exact (effective_jacobian_rel Qalg (Fpalg _) (Rp _) (Fp_rel _ Hp) (S N) ss L rays).
Qed.

(** *** Dimension lower bounds: the rank of a native ray Jacobian *)

Definition check_native_rank (N : nat) (ls : list (list Q * QSM * QSM * QSM)) (rays : list QSM)
    (r : nat) (w : rank_witness) : bool :=
  let p := rw_p w in
  check_rank_of p (fpray p N (native_jacobian (Fpalg p) (S N) ls rays)) w r.

Theorem check_native_rank_sound N ls rays r w :
  check_native_rank N ls rays r w = true ->
  rank_at_least (qray N (native_jacobian Qalg (S N) ls rays)) r.
Proof.
  unfold check_native_rank; intros H.
  eapply check_rank_of_sound; [reflexivity| |exact H].
  intros Hp; apply ray_coefficients_rel; [apply (rel_zero _ _ _ (Fp_rel _ Hp))|].
  exact (native_jacobian_rel Qalg (Fpalg _) (Rp _) (Fp_rel _ Hp) (S N) ls rays).
Qed.

(** ** Zeros over Q from bounds and several primes *)

Definition bemb (bases : list Z) (c : list Q) : bser :=
  BS (forallb (cconst_ok bases) c) (coef c 0) (map (cconst bases) c).

Lemma bemb_rel bases m c : RB bases m c (bemb bases c).
Proof.
  intros E; split; [intros; reflexivity|]. intros k Hk. cbn [bcs bemb].
  destruct (Nat.lt_ge_cases k (length c)) as [H|H].
  - rewrite (nth_map_lt _ _ 0) by auto. apply cconst_sound.
    cbn [bok bemb] in E. rewrite forallb_forall in E. apply E, nth_In; auto.
  - rewrite nth_overflow by (rewrite map_length; auto). cbn [cbound]. unfold coef; rewrite nth_overflow; auto; reflexivity.
Qed.

(** The largest [e + dexp g] among the coefficients [k < lim c] of the entries. *)
Definition needed_bits (bases : list Z) (N P : nat) (lim : nat -> nat) (JBb : list (list bser)) : Z :=
  fold_left Z.max
    (flat_map (fun i => let rb := nth i JBb [] in
       flat_map (fun c => let eb := nth c rb (BS false 0 []) in
          map (fun k => match nth k (bcs eb) None with Some (e, g) => (e + dexp bases g)%Z | None => 0%Z end)
              (seq 0 (lim c)))
         (seq 0 P))
      (seq 0 N)) 0%Z.

(** The shortest prefix of the candidate moduli whose bits exceed [bits]. *)
Fixpoint choose_primes (cands : list int) (bits : Z) : list int :=
  match cands with
  | [] => []
  | p :: ps => if (bits <? Z.log2 (to_Z p))%Z then [p] else p :: choose_primes ps (bits - Z.log2 (to_Z p))
  end.

Definition primes_ok (ps : list int) : bool := andb (forallb p_ok ps) (coprime_b (map to_Z ps)).

Definition zeros_mod (bases : list Z) (ps : list int) (N P : nat) (lim : nat -> nat)
    (JBb : list (list bser)) (JBps : list (list (list (list fp)))) : bool :=
  forallb (fun i =>
    let rb := nth i JBb [] in
    let rps := map (fun J => nth i J []) JBps in
    forallb (fun c =>
      let eb := nth c rb (BS false 0 []) in
      let eps := map (fun r => nth c r []) rps in
      andb (bok eb)
        (forallb (fun k => zero_ok bases ps (nth k (bcs eb) None) (map (fun s => nth k s (0%uint63, true)) eps))
                 (seq 0 (lim c))))
      (seq 0 P))
    (seq 0 N).

Lemma Forall2_map_r {X Y : Type} (R : X -> Y -> Prop) (f : X -> Y) l :
  (forall x, In x l -> R x (f x)) -> Forall2 R l (map f l).
Proof. induction l; intros H; simpl; constructor; auto; [apply H; left|apply IHl; intros; apply H; right]; auto. Qed.

Lemma Rp_zero p : (0 < to_Z p)%Z -> Rp p 0 (0%uint63, true).
Proof.
  intros Hp _; simpl; rewrite to_Z_0; split; [lia|].
  exists 0%Z, 1%Z, 1%Z; split; [lia|split; [reflexivity|split; apply cong_eq; ring]].
Qed.

Lemma zeros_mod_sound bases ps m N P lim (JBq : SM) JBb JBps :
  Forall (fun b => (0 < b)%Z) bases -> primes_ok ps = true ->
  Forall2 (Forall2 (RB bases m)) JBq JBb ->
  length JBps = length ps ->
  (forall j, (j < length ps)%nat -> Forall2 (Forall2 (Forall2 (Rp (nth j ps 1%uint63)))) JBq (nth j JBps [])) ->
  (forall c, (lim c <= m)%nat) ->
  zeros_mod bases ps N P lim JBb JBps = true ->
  forall i c k, (i < N)%nat -> (c < P)%nat -> (k < lim c)%nat -> coef (nth c (nth i JBq []) []) k == 0.
Proof.
  intros Hb Hps HB Hlen HP Hlim Hz i c k Hi Hc Hk.
  unfold primes_ok in Hps; apply andb_prop in Hps as [Hp1 Hp2].
  assert (Hpp : forall p, In p ps -> (1 < to_Z p < 2147483648)%Z).
  { intros p Hp; rewrite forallb_forall in Hp1; apply p_ok_spec, Hp1; auto. }
  pose proof (forallb_seq _ _ Hz i Hi) as Z1; cbv beta in Z1.
  pose proof (forallb_seq _ _ Z1 c Hc) as Z2; cbv beta in Z2.
  apply andb_prop in Z2 as [Hok Z3].
  pose proof (forallb_seq _ _ Z3 k Hk) as Z4; cbv beta in Z4.
  set (eb := nth c (nth i JBb []) (BS false 0 [])) in *.
  assert (HRB : RB bases m (nth c (nth i JBq []) []) eb).
  { unfold eb. apply Forall2_nth; [apply Forall2_nth; auto; constructor|].
    intros E; discriminate E. }
  destruct (HRB Hok) as [_ Hs].
  eapply zero_of_primes; [exact Hb| | exact Hp2 | apply Hs; specialize (Hlim c); lia | | exact Z4].
  - rewrite Forall_forall; intros p Hp; specialize (Hpp p Hp); lia.
  - apply Forall2_of_nth.
    + rewrite !map_length; auto.
    + intros j d d' Hj.
      assert (Hj' : (j < length JBps)%nat) by lia.
      rewrite (nth_map_lt _ _ []) by (rewrite !map_length; lia).
      rewrite (nth_map_lt _ _ []) by (rewrite map_length; lia).
      rewrite (nth_map_lt _ _ []) by lia.
      rewrite (nth_indep ps d 1%uint63) by auto.
      assert (Hpj : (1 < to_Z (nth j ps 1%uint63) < 2147483648)%Z) by (apply Hpp, nth_In; auto).
      apply Forall2_nth.
      * apply Forall2_nth; [apply Forall2_nth; [apply HP; auto|constructor]|constructor].
      * apply Rp_zero; lia.
Qed.

Lemma gmat_mul_rel (A B : alg) (R : car A -> car B -> Prop) (HR : alg_rel A B R) n2 X X' Y Y' :
  Forall2 (Forall2 R) X X' -> Forall2 (Forall2 R) Y Y' ->
  Forall2 (Forall2 R) (gmat_mul A n2 X Y) (gmat_mul B n2 X' Y').
Proof.
  intros HX HY; unfold gmat_mul; eapply Forall2_map; eauto; intros row row' Hr.
  apply Forall2_seq_map; intros j. apply (dot_rel _ _ _ HR); auto.
  unfold gcol; eapply Forall2_map; eauto; intros u u' Hu; apply Forall2_nth; auto; apply (rel_zero _ _ _ HR).
Qed.

Record zero_witness := {
  zw_bases : list Z;      (* positive bases of the denominators *)
  zw_cands : list int     (* candidate moduli, pairwise coprime, below 2^31 *)
}.

(** *** Theorem 4 / Prop. D.1, with the zeros proved from bounds and primes *)

Definition spec_lim (r m : nat) (s : list nat) (c : nat) : nat := if Nat.ltb c r then nth c s O else m.

Definition reduceS (p : int) (B : SM) : list (list (list fp)) := map (map (map (fofQ p))) B.

Definition JBmod (p : int) (m P : nat) (ls : list (list Q * QSM * QSM * QSM)) (bank : list QSM) (B : SM)
    : list (list (list fp)) :=
  gmat_mul (Sa (Fpalg p) m) P (native_jacobian (Fpalg p) m ls bank) (reduceS p B).

Definition check_spectrum_mod (m : nat) (ls : list (list Q * QSM * QSM * QSM)) (bank : list QSM)
    (s : list nat) (z : nat) (w : spectrum_witness) (zw : zero_witness) : bool :=
  let r := length s in
  let P := (r + z)%nat in
  let B := frame_B P (sw_vis w) (sw_xi w) in
  let bases := zw_bases zw in
  let JBb := gmat_mul (BSalg bases m) P (native_jacobian_in (BSalg bases m) (bemb bases) ls bank)
                      (map (map (bemb bases)) B) in
  let N := length JBb in
  let lim := spec_lim r m s in
  let ps := choose_primes (zw_cands zw) (needed_bits bases N P lim JBb) in
  let p := sw_p w in
  let JB0 := JBmod p m P ls bank B in
  let E0 := map (fun i => map (fun c => nth (nth c s O) (nth c (nth i JB0 []) []) (0%uint63, true)) (seq 0 r))
                (sw_rows w) in
  andb (andb (andb (sorted_b s) (forallb (fun k => Nat.ltb k m) s))
             (andb (andb (Nat.eqb (length (sw_vis w)) r) (Nat.leb r N))
                   (andb (Nat.eqb (native_size ls) P) (Nat.eqb (length (sw_xi w)) z))))
   (andb (andb (andb (nodup_b (sw_rows w)) (Nat.eqb (length (sw_rows w)) r))
               (andb (forallb (fun i => Nat.ltb i N) (sw_rows w)) (p_ok p)))
         (andb (andb (check_nonsingular p (const_part B) (sw_WB w)) (forallb (fun b => Z.ltb 0 b) bases))
               (andb (andb (primes_ok ps) (zeros_mod bases ps N P lim JBb (map (fun q => JBmod q m P ls bank B) ps)))
                     (check_inverse p E0 (seq 0 r) (sw_WE w) r)))).

Lemma map_ofQ_Q (c : list Q) : map (@ofQ Qalg) c = c.
Proof. induction c; simpl; f_equal; auto. Qed.

Lemma reduceS_rel p (B : SM) : (1 < to_Z p < 2147483648)%Z -> Forall2 (Forall2 (Forall2 (Rp p))) B (reduceS p B).
Proof.
  intros Hp. pose proof (Fp_rel p Hp) as HR. unfold reduceS.
  apply Forall2_map_r; intros row _; apply Forall2_map_r; intros e _; apply Forall2_map_r; intros q _.
  apply (rel_ofQ _ _ _ HR).
Qed.

Lemma JBmod_rel p m P ls bank B : (1 < to_Z p < 2147483648)%Z ->
  Forall2 (Forall2 (Forall2 (Rp p))) (smat_mul m P (native_jacobian Qalg m ls bank) B) (JBmod p m P ls bank B).
Proof.
  intros Hp. unfold smat_mul, JBmod.
  apply (gmat_mul_rel (series_alg Qalg m) (Sa (Fpalg p) m) (Forall2 (Rp p)) (series_rel _ _ _ (Fp_rel p Hp) m)).
  - exact (native_jacobian_rel Qalg (Fpalg p) (Rp p) (Fp_rel p Hp) m ls bank).
  - apply reduceS_rel; auto.
Qed.

Lemma JBb_rel bases m P ls bank (B : SM) :
  Forall2 (Forall2 (RB bases m)) (smat_mul m P (native_jacobian Qalg m ls bank) B)
    (gmat_mul (BSalg bases m) P (native_jacobian_in (BSalg bases m) (bemb bases) ls bank) (map (map (bemb bases)) B)).
Proof.
  unfold smat_mul. apply (gmat_mul_rel (series_alg Qalg m) (BSalg bases m) (RB bases m) (BS_rel bases m)).
  - unfold native_jacobian.
    apply (native_jacobian_in_rel (Sa Qalg m) (BSalg bases m) (RB bases m) (BS_rel bases m)).
    intros c; unfold Sa; cbn [car series_alg]. rewrite map_ofQ_Q. apply bemb_rel.
  - apply Forall2_map_r; intros row _; apply Forall2_map_r; intros e _; apply bemb_rel.
Qed.

Lemma frame_rel p (JBq : SM) (JB0 : list (list (list fp))) (s : list nat) (I : list nat) r :
  (1 < to_Z p)%Z -> Forall2 (Forall2 (Forall2 (Rp p))) JBq JB0 ->
  Forall2 (Forall2 (Rp p))
    (map (fun i => map (fun c => coef (nth c (nth i JBq []) []) (nth c s O)) (seq 0 r)) I)
    (map (fun i => map (fun c => nth (nth c s O) (nth c (nth i JB0 []) []) (0%uint63, true)) (seq 0 r)) I).
Proof.
  intros Hp H. apply Forall2_seq_map_list; intros i. apply Forall2_seq_map; intros c.
  unfold coef. apply Forall2_nth; [apply Forall2_nth; [apply Forall2_nth; auto; constructor|constructor]|].
  apply Rp_zero; lia.
Qed.

Ltac tlia :=
  repeat match goal with
         | |- context [car (BSalg ?b ?m)] => change (car (BSalg b m)) with bser in *
         | H : context [car (BSalg ?b ?m)] |- _ => change (car (BSalg b m)) with bser in *
         end;
  change (car Qalg) with Q in *; lia.

Theorem check_spectrum_mod_sound m ls bank s z w zw :
  check_spectrum_mod m ls bank s z w zw = true ->
  smith_form m (native_jacobian Qalg m ls bank) s z.
Proof.
  unfold check_spectrum_mod; intros H. cbv zeta in H.
  repeat match goal with
         | H : andb _ _ = true |- _ => apply andb_prop in H as [? ?]
         end.
  repeat match goal with
         | H : Nat.eqb _ _ = true |- _ => apply Nat.eqb_eq in H
         | H : Nat.leb _ _ = true |- _ => apply Nat.leb_le in H
         end.
  match goal with H : length (sw_xi w) = z |- _ => subst z end.
  match goal with H : p_ok (sw_p w) = true |- _ => apply p_ok_spec in H; rename H into Hp end.
  pose proof (JBb_rel (zw_bases zw) m (length s + length (sw_xi w)) ls bank
                (frame_B (length s + length (sw_xi w)) (sw_vis w) (sw_xi w))) as HJBb.
  change (car (BSalg (zw_bases zw) m)) with bser in *.
  match type of HJBb with Forall2 _ ?Q ?Bb =>
    assert (HN : length Bb = length (native_jacobian Qalg m ls bank));
      [transitivity (length Q); [symmetry; exact (Forall2_length _ _ _ _ _ HJBb)|];
       unfold smat_mul, gmat_mul; rewrite map_length; reflexivity|] end.
  assert (Hb : Forall (fun b => (0 < b)%Z) (zw_bases zw)).
  { apply Forall_forall; intros b Hb.
    match goal with H : forallb (fun b => Z.ltb 0 b) _ = true |- _ => rewrite forallb_forall in H; apply Z.ltb_lt, H; auto end. }
  assert (Hlimm : forall c, (spec_lim (length s) m s c <= m)%nat).
  { intros c; unfold spec_lim. destruct (Nat.ltb_spec c (length s)); [|tlia].
    match goal with H : forallb (fun k => Nat.ltb k m) s = true |- _ => rewrite forallb_forall in H end.
    assert (Hin : In (nth c s O) s) by (apply nth_In; auto).
    match goal with H : forall x, In x s -> Nat.ltb x m = true |- _ => specialize (H _ Hin); apply Nat.ltb_lt in H end; tlia. }
  match goal with H : zeros_mod ?bs ?ps ?N ?P ?lim ?JBb ?JBps = true |- _ =>
    assert (Hz := zeros_mod_sound bs ps m N P lim
                    (smat_mul m (length s + length (sw_xi w)) (native_jacobian Qalg m ls bank)
                       (frame_B (length s + length (sw_xi w)) (sw_vis w) (sw_xi w))) JBb JBps Hb) end.
  match goal with H : primes_ok _ = true |- _ => specialize (Hz H); rename H into Hpo end.
  specialize (Hz HJBb ltac:(rewrite map_length; auto)).
  match type of Hz with (forall j, (j < length ?ps)%nat -> _) -> _ =>
    assert (HPp : forall j, (j < length ps)%nat ->
              Forall2 (Forall2 (Forall2 (Rp (nth j ps 1%uint63))))
                (smat_mul m (length s + length (sw_xi w)) (native_jacobian Qalg m ls bank)
                   (frame_B (length s + length (sw_xi w)) (sw_vis w) (sw_xi w)))
                (nth j (map (fun q => JBmod q m (length s + length (sw_xi w)) ls bank
                   (frame_B (length s + length (sw_xi w)) (sw_vis w) (sw_xi w))) ps) []));
    [intros j Hj; rewrite (nth_map_lt _ _ 1%uint63) by auto; apply JBmod_rel;
     unfold primes_ok in Hpo; apply andb_prop in Hpo as [Hpo' _]; rewrite forallb_forall in Hpo';
     apply p_ok_spec, Hpo', nth_In; auto|] end.
  specialize (Hz HPp Hlimm).
  match goal with H : zeros_mod _ _ _ _ _ _ _ = true |- _ => specialize (Hz H) end.
  apply (smith_of_frame m _ s (sw_vis w) (sw_xi w) (sw_rows w)).
  - apply sorted_b_spec; auto.
  - apply Forall_forall; intros k Hk; apply Nat.ltb_lt.
    match goal with H : forallb (fun k => Nat.ltb k m) s = true |- _ => rewrite forallb_forall in H; apply H; auto end.
  - assumption.
  - tlia.
  - pose proof (native_jacobian_shape Qalg m ls bank) as HS.
    match goal with H : native_size ls = _ |- _ => rewrite H in HS end. exact HS.
  - apply (check_nonsingular_sound (sw_p w) _ (sw_WB w) Hp); assumption.
  - intros i c k Hi Hc Hk. apply (Hz i c k); [tlia|tlia|]. unfold spec_lim.
    destruct (Nat.ltb_spec c (length s)); [auto|tlia].
  - intros i c k Hi Hc Hk. apply (Hz i c k); [tlia|tlia|]. unfold spec_lim.
    destruct (Nat.ltb_spec c (length s)); [tlia|auto].
  - apply nodup_b_spec; assumption.
  - assumption.
  - apply Forall_forall; intros i Hi.
    match goal with H : forallb (fun i => Nat.ltb i _) (sw_rows w) = true |- _ =>
      rewrite forallb_forall in H; specialize (H i Hi); apply Nat.ltb_lt in H end.
    tlia.
  - split.
    + apply Forall_forall; intros row Hrow. unfold divided_frame in Hrow.
      apply in_map_iff in Hrow as [i [<- _]]. rewrite map_length, seq_length.
      unfold divided_frame; rewrite map_length; tlia.
    + unfold divided_frame; rewrite map_length.
      match goal with H : length (sw_rows w) = length s |- _ => rewrite H end.
      eapply fcr_of_check; [exact Hp| |eassumption].
      apply frame_rel; [tlia|]. apply JBmod_rel; exact Hp.
Qed.

(** *** Theorem 3, with the zeros of the last block proved from bounds and primes *)

Definition jet_lim (last : list nat) (N c : nat) : nat := if existsb (Nat.eqb c) last then N else O.

Definition JEmod (q : int) (N : nat) (ss : list (list Q * QSM)) (L : QSM) (rays : list QSM)
    : list (list (list fp)) := effective_jacobian (Fpalg q) (S N) ss L rays.

Definition check_jet_mod (N : nat) (ss : list (list Q * QSM)) (L : QSM) (rays : list QSM)
    (last : list nat) (w : rank_witness) (zw : zero_witness) : bool :=
  let p := rw_p w in
  let P := effective_size ss L in
  let bases := zw_bases zw in
  let Jb := effective_jacobian_in (BSalg bases (S N)) (bemb bases) ss L rays in
  let lim := jet_lim last N in
  let ps := choose_primes (zw_cands zw) (needed_bits bases (length Jb) P lim Jb) in
  andb (andb (andb (p_ok p) (check_inverse p (fpray p N (effective_jacobian (Fpalg p) (S N) ss L rays)) (rw_rows w) (rw_W w) P))
             (andb (forallb (fun j => Nat.ltb j P) last) (forallb (fun b => Z.ltb 0 b) bases)))
       (andb (primes_ok ps)
             (zeros_mod bases ps (length Jb) P lim Jb (map (fun q => JEmod q N ss L rays) ps))).

Theorem check_jet_mod_sound N ss L rays last w zw :
  check_jet_mod N ss L rays last w zw = true ->
  sharp_degree (effective_jacobian Qalg (S N) ss L rays) (effective_size ss L) N last.
Proof.
  unfold check_jet_mod; intros H; cbv zeta in H.
  repeat match goal with H : andb _ _ = true |- _ => apply andb_prop in H as [? ?] end.
  match goal with H : p_ok (rw_p w) = true |- _ => apply p_ok_spec in H; rename H into Hp end.
  split.
  - eapply fcr_of_check; [exact Hp| |eassumption].
    apply ray_coefficients_rel; [apply (rel_zero _ _ _ (Fp_rel _ Hp))|].
    exact (effective_jacobian_rel Qalg (Fpalg _) (Rp _) (Fp_rel _ Hp) (S N) ss L rays).
  - set (bases := zw_bases zw) in *.
    assert (HJb : Forall2 (Forall2 (RB bases (S N))) (effective_jacobian Qalg (S N) ss L rays)
                    (effective_jacobian_in (BSalg bases (S N)) (bemb bases) ss L rays)).
    { apply (effective_jacobian_in_rel (Sa Qalg (S N)) (BSalg bases (S N)) (RB bases (S N)) (BS_rel bases (S N))).
      intros c; unfold Sa; cbn [car series_alg]. rewrite map_ofQ_Q. apply bemb_rel. }
    change (car (BSalg bases (S N))) with bser in *.
    assert (Hb : Forall (fun b => (0 < b)%Z) bases).
    { apply Forall_forall; intros b Hb.
      match goal with H : forallb (fun b => Z.ltb 0 b) _ = true |- _ => rewrite forallb_forall in H; apply Z.ltb_lt, H; auto end. }
    match goal with H : zeros_mod ?bs ?ps ?NN ?P ?lim ?JBb ?JBps = true |- _ =>
      assert (Hz := zeros_mod_sound bs ps (S N) NN P lim (effective_jacobian Qalg (S N) ss L rays) JBb JBps Hb) end.
    match goal with H : primes_ok _ = true |- _ => specialize (Hz H); rename H into Hpo end.
    specialize (Hz HJb ltac:(rewrite map_length; auto)).
    match type of Hz with (forall j, (j < length ?ps)%nat -> _) -> _ =>
      assert (HPp : forall j, (j < length ps)%nat ->
                Forall2 (Forall2 (Forall2 (Rp (nth j ps 1%uint63))))
                  (effective_jacobian Qalg (S N) ss L rays)
                  (nth j (map (fun q => JEmod q N ss L rays) ps) []));
      [intros j Hj; rewrite (nth_map_lt _ _ 1%uint63) by auto;
       unfold primes_ok in Hpo; apply andb_prop in Hpo as [Hpo' _]; rewrite forallb_forall in Hpo';
       assert (Hpj := p_ok_spec _ (Hpo' _ (nth_In ps 1%uint63 Hj)));
       exact (effective_jacobian_rel Qalg (Fpalg _) (Rp _) (Fp_rel _ Hpj) (S N) ss L rays)|] end.
    specialize (Hz HPp ltac:(intros c; unfold jet_lim; destruct (existsb _ _); lia)).
    match goal with H : zeros_mod _ _ _ _ _ _ _ = true |- _ => specialize (Hz H) end.
    intros row j k Hrow Hj Hk.
    apply In_nth with (d := []) in Hrow as [i [Hi <-]].
    assert (HjP : (j < effective_size ss L)%nat).
    { match goal with H : forallb (fun j => Nat.ltb j _) last = true |- _ => rewrite forallb_forall in H; apply Nat.ltb_lt, H; auto end. }
    apply (Hz i j k); [|auto|].
    + assert (E := Forall2_length _ _ _ _ _ HJb). tlia.
    + unfold jet_lim. replace (existsb (Nat.eqb j) last) with true; auto.
      symmetry; apply existsb_exists; exists j; split; auto; apply Nat.eqb_refl.
Qed.

(** ** The checker's arithmetic bounds, stated

    The numeric limits the checks rely on, each a lemma (docs/coq.rst lists them; a test
    compares that list with this file).  A modulus passes [p_ok] only below [2^31]; residues
    are below the modulus, so a sum of two stays below [2^32] and a product below [2^62],
    inside the primitive integers' [2^63] without wrapping; a coefficient [c] with [|c| <= 2^e]
    and [den bases g * c] an integer is proved zero ([zero_ok], [zero_of_primes]) only when
    [e + dexp bases g] is below [log2sum] of the moduli, and then their product exceeds
    [2^e * den bases g], the bound of that integer. *)

Lemma bound_modulus p : p_ok p = true -> (1 < to_Z p < 2 ^ 31)%Z.
Proof. intros H; apply p_ok_spec in H; change (2 ^ 31)%Z with 2147483648%Z; lia. Qed.

Lemma bound_residue_sum p a b : (to_Z p < 2 ^ 31)%Z -> (to_Z a < to_Z p)%Z -> (to_Z b < to_Z p)%Z ->
  (0 <= to_Z a + to_Z b < 2 ^ 32)%Z.
Proof.
  intros; pose proof (to_Z_bounded a); pose proof (to_Z_bounded b).
  change (2 ^ 32)%Z with (2 * 2 ^ 31)%Z; lia.
Qed.

Lemma bound_residue_product p a b : (to_Z p < 2 ^ 31)%Z -> (to_Z a < to_Z p)%Z -> (to_Z b < to_Z p)%Z ->
  (0 <= to_Z a * to_Z b < 2 ^ 62)%Z.
Proof.
  intros Hp Ha Hb; pose proof (to_Z_bounded a) as [A _]; pose proof (to_Z_bounded b) as [B _].
  split; [apply Z.mul_nonneg_nonneg; lia|].
  apply Z.le_lt_trans with ((2 ^ 31 - 1) * (2 ^ 31 - 1))%Z; [apply Z.mul_le_mono_nonneg; lia|].
  change (2 ^ 62)%Z with (2 ^ 31 * 2 ^ 31)%Z; nia.
Qed.

Lemma bound_no_wrap : (2 ^ 62 < wB)%Z.
Proof. reflexivity. Qed.

Lemma bound_zero_primes bases g e ps : Forall (fun b => (0 < b)%Z) bases -> nonneg g -> (0 <= e)%Z ->
  Forall (fun p => (1 < p)%Z) ps -> (e + dexp bases g < log2sum ps)%Z ->
  (2 ^ e * den bases g < prodz ps)%Z.
Proof.
  intros Hb Hg He Hps Hbits.
  pose proof (den_le_pow2 bases g Hb Hg) as Hd. pose proof (prodz_ge ps Hps) as Hp.
  pose proof (dexp_nonneg bases g Hb Hg) as Hde. pose proof (den_pos bases g Hb Hg) as Hdp.
  apply Z.le_lt_trans with (2 ^ e * 2 ^ dexp bases g)%Z.
  - apply Z.mul_le_mono_nonneg_l; [apply Z.pow_nonneg; lia|auto].
  - rewrite <- Z.pow_add_r by lia.
    apply Z.lt_le_trans with (2 ^ log2sum ps)%Z; auto.
    apply Z.pow_lt_mono_r; lia.
Qed.
